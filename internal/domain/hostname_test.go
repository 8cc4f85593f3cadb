package domain

import (
	"strings"
	"testing"
)

func TestParseHostname(t *testing.T) {
	t.Parallel()
	ok := map[string]string{
		"go.acme.com":                   "go.acme.com",
		"Go.ACME.com":                   "go.acme.com",
		"go.acme.com.":                  "go.acme.com",
		"bücher.example":                "xn--bcher-kva.example",
		"XN--BCHER-KVA.example":         "xn--bcher-kva.example",
		"a-b.c0.io":                     "a-b.c0.io",
		"1.2.3.example":                 "1.2.3.example",
		strings.Repeat("a", 63) + ".io": strings.Repeat("a", 63) + ".io",
	}
	for in, want := range ok {
		h, err := ParseHostname(in)
		if err != nil || h.String() != want {
			t.Errorf("ParseHostname(%q) = %q, %v; want %q", in, h, err, want)
		}
	}
	long := strings.Repeat(strings.Repeat("a", 62)+".", 4) + "io" // 254 bytes
	bad := []string{
		"", "com", "localhost", "1.2.3.4", "::1", "[::1]", "127.0.0.1.", "10.0.0.300",
		"https://go.acme.com", "go.acme.com:443", "go.acme.com/x", "user@go.acme.com",
		"go acme.com", "-go.acme.com", "go-.acme.com", "go..acme.com", ".acme.com",
		"go_x.acme.com", strings.Repeat("a", 64) + ".io", long, "go.acme.com\n", "xn--zz.example",
	}
	for _, in := range bad {
		if h, err := ParseHostname(in); err == nil {
			t.Errorf("ParseHostname(%q) = %q, want an error", in, h)
		}
	}
	if h, _ := ParseHostname("go.acme.com"); h.RecordName() != "_linkqr.go.acme.com" {
		t.Errorf("record name %q", h.RecordName())
	}
}

func TestServiceRefusesOwnHosts(t *testing.T) {
	t.Parallel()
	s := NewService(Options{ReservedHosts: []string{"App.Example.com", "qr.example"}})
	for _, in := range []string{"app.example.com", "QR.example."} {
		if _, err := s.ParseHostname(in); err == nil || !strings.Contains(err.Error(), "own hostname") {
			t.Errorf("ParseHostname(%q): %v", in, err)
		}
	}
	if _, err := s.ParseHostname("go.example.com"); err != nil {
		t.Errorf("a custom domain refused: %v", err)
	}
}

func FuzzParseHostname(f *testing.F) {
	for _, s := range []string{"go.acme.com", "bücher.example", "1.2.3.4", "a..b", "xn--bcher-kva.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		h, err := ParseHostname(raw)
		if err != nil {
			return
		}
		again, err := ParseHostname(h.String())
		if err != nil || again != h {
			t.Fatalf("%q parsed to %q, which does not parse to itself (%q, %v)", raw, h, again, err)
		}
		if len(h.String()) > MaxHostnameBytes || h.String() != strings.ToLower(h.String()) || !strings.Contains(h.String(), ".") {
			t.Fatalf("%q parsed to non-canonical %q", raw, h)
		}
	})
}
