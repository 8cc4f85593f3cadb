package webhook_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/webhook"
)

func TestPublic(t *testing.T) {
	t.Parallel()
	refused := []string{
		"127.0.0.1", "127.255.255.254", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"169.254.169.254", "100.64.0.1", "100.127.255.255", "0.0.0.0", "0.1.2.3", "224.0.0.1",
		"239.255.255.250", "240.0.0.1", "255.255.255.255", "192.0.2.10", "198.51.100.7", "203.0.113.9",
		"192.0.0.8", "198.18.0.1",
		"::", "::1", "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1", "2001:db8::1", "fec0::1",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:192.0.2.1", "::127.0.0.1",
		"64:ff9b::7f00:1", "64:ff9b::a00:1", // NAT64 of loopback and 10.0.0.1
	}
	for _, s := range refused {
		if webhook.Public(netip.MustParseAddr(s)) {
			t.Errorf("Public(%s) = true, want false", s)
		}
	}
	if webhook.Public(netip.MustParseAddr("fe80::1%eth0")) {
		t.Error("a zoned address passed")
	}
	allowed := []string{"93.184.216.34", "8.8.8.8", "1.1.1.1", "100.128.0.1", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"}
	for _, s := range allowed {
		if !webhook.Public(netip.MustParseAddr(s)) {
			t.Errorf("Public(%s) = false, want true", s)
		}
	}
}

func TestGuardCheckHost(t *testing.T) {
	t.Parallel()
	res := newResolver("public.example", "93.184.216.34", "mixed.example", "93.184.216.34")
	res.set("mixed.example", "93.184.216.34", "10.0.0.5") // one bad address is enough to refuse
	res.set("mapped.example", "::ffff:127.0.0.1")
	g := &webhook.Guard{Resolver: res}
	ctx := context.Background()
	if err := g.CheckHost(ctx, "public.example"); err != nil {
		t.Errorf("public host refused: %v", err)
	}
	for _, h := range []string{"mixed.example", "mapped.example", "127.0.0.1", "::1"} {
		if err := g.CheckHost(ctx, h); !errors.Is(err, webhook.ErrNotPublic) {
			t.Errorf("CheckHost(%s) = %v, want ErrNotPublic", h, err)
		}
	}
	if err := g.CheckHost(ctx, "nxdomain.example"); err == nil || errors.Is(err, webhook.ErrNotPublic) {
		t.Errorf("unresolvable host: %v", err)
	}
	open := &webhook.Guard{AllowPrivate: true, Resolver: res}
	if err := open.CheckHost(ctx, "127.0.0.1"); err != nil {
		t.Errorf("AllowPrivate still refused loopback: %v", err)
	}
}

// TestGuardRefusesAtConnectTime is DNS rebinding: the name resolved to a
// public address when the subscription was checked, and to loopback when
// the delivery dials. The dialer's Control hook refuses the connection, and
// nothing reaches the listener.
func TestGuardRefusesAtConnectTime(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	res := newResolver("rebind.example", "93.184.216.34")
	g := &webhook.Guard{Resolver: res}
	if err := g.CheckHost(context.Background(), "rebind.example"); err != nil {
		t.Fatalf("creation-time check: %v", err)
	}
	res.set("rebind.example", "127.0.0.1")
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	_, err = g.DialContext(context.Background(), "tcp", net.JoinHostPort("rebind.example", port))
	if !errors.Is(err, webhook.ErrNotPublic) {
		t.Fatalf("dial after rebinding: %v, want ErrNotPublic", err)
	}
	// A literal address is vetted the same way.
	if _, err := g.DialContext(context.Background(), "tcp", ln.Addr().String()); !errors.Is(err, webhook.ErrNotPublic) {
		t.Fatalf("dial of a literal loopback address: %v, want ErrNotPublic", err)
	}
	select {
	case <-accepted:
		t.Fatal("the listener accepted a connection")
	default:
	}
	// With private addresses allowed the same dial connects: the refusal
	// above is the guard, not a broken dialer.
	c, err := (&webhook.Guard{AllowPrivate: true, Resolver: res}).DialContext(context.Background(), "tcp", net.JoinHostPort("rebind.example", port))
	if err != nil {
		t.Fatalf("allowed dial: %v", err)
	}
	c.Close()
	<-accepted
}

func TestParseURL(t *testing.T) {
	t.Parallel()
	long := "https://hooks.example.com/" + strings.Repeat("a", 2048)
	bad := map[string]string{
		"":                                        "must be an absolute https URL",
		"/relative":                               "must be an absolute https URL",
		"ftp://hooks.example.com/":                "must be an absolute https URL",
		"http://hooks.example.com/":               "must use https",
		"https://user:pw@hooks.example.com/":      "user name or password",
		"https://user@hooks.example.com/":         "user name or password",
		"https://hooks.example.com/a b":           "spaces or control characters",
		"https:///path":                           "must be an absolute https URL",
		"https://hooks.example.com:99999/":        "port",
		long:                                      "at most 2048 bytes",
		"javascript:alert(1)":                     "must be an absolute https URL",
		"https://hooks.example.com/\x00":          "control characters",
		"https://hooks.example.com/h\xff\xfe":     "valid UTF-8",
		"https://hooks.example.com/?\xed\xa0\x80": "valid UTF-8",
	}
	for in, want := range bad {
		if _, err := webhook.ParseURL(in, false); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseURL(%.40q) = %v, want %q", in, err, want)
		}
	}
	for _, in := range []string{"https://hooks.example.com/linkqr", "https://93.184.216.34:8443/x?y=1", "https://[2606:4700::1]/"} {
		if _, err := webhook.ParseURL(in, false); err != nil {
			t.Errorf("ParseURL(%q): %v", in, err)
		}
	}
	if _, err := webhook.ParseURL("http://127.0.0.1:8080/h", true); err != nil {
		t.Errorf("http with allowHTTP: %v", err)
	}
	if _, err := webhook.ParseURL(strings.Repeat("x", 0)+"https://hooks.example.com/"+strings.Repeat("a", 2048-len("https://hooks.example.com/")), false); err != nil {
		t.Errorf("a 2048-byte URL is allowed: %v", err)
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"https://hooks.example.com/x", "http://127.0.0.1:8080/h", "https://u:p@h/", "https://[::1]:0/", "//x", "https://h:65536/",
		"https://h/\xff", "https://h/a\x00", "https://h/\u202e"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, raw string, allowHTTP bool) {
		u, err := webhook.ParseURL(raw, allowHTTP)
		if err != nil {
			return
		}
		scheme := strings.ToLower(u.Scheme)
		if len(raw) > webhook.MaxURLBytes || u.User != nil || u.Hostname() == "" || !utf8.ValidString(raw) || strings.ContainsRune(raw, 0) ||
			!(scheme == "https" || (allowHTTP && scheme == "http")) {
			t.Fatalf("accepted %q (allowHTTP %v)", raw, allowHTTP)
		}
	})
}
