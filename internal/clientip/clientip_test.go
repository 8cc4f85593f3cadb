package clientip

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestResolver(t *testing.T) {
	t.Parallel()
	res := Resolver{Trusted: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}}
	cases := []struct {
		peer, xff, want string
	}{
		{"203.0.113.9:1234", "", "203.0.113.9"},
		{"203.0.113.9:1234", "198.51.100.1", "203.0.113.9"}, // untrusted peer: header ignored
		{"10.1.2.3:80", "198.51.100.1", "198.51.100.1"},
		{"10.1.2.3:80", "1.1.1.1, 198.51.100.1, 10.9.9.9", "198.51.100.1"}, // right-most untrusted
		{"10.1.2.3:80", "", "10.1.2.3"},
		{"10.1.2.3:80", "garbage", "10.1.2.3"},
		{"[::1]:80", "2001:db8::5", "2001:db8::5"},
		{"[::ffff:203.0.113.9]:1", "", "203.0.113.9"},
		{"[fe80::1%eth0]:80", "", "fe80::1"},             // a link-local peer: its zone is no part of the address
		{"[::1]:80", "fe80::7%en0, 10.0.0.1", "fe80::7"}, // found by FuzzResolver
	}
	for _, tc := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.peer
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got := res.Of(r); got.String() != tc.want {
			t.Errorf("peer %s xff %q: got %s, want %s", tc.peer, tc.xff, got, tc.want)
		}
		peer := netip.MustParseAddrPort(tc.peer).Addr().Unmap().WithZone("")
		if want := peer.Is4() && peer.As4()[0] == 10 || peer == netip.IPv6Loopback(); res.FromTrustedProxy(r) != want {
			t.Errorf("peer %s: FromTrustedProxy %v", tc.peer, res.FromTrustedProxy(r))
		}
	}
}

// FuzzResolver: the client address is the socket peer unless the peer is a
// trusted proxy, and then an untrusted address of X-Forwarded-For or the
// peer itself; never a trusted proxy behind another, never zoned.
func FuzzResolver(f *testing.F) {
	f.Add("10.1.2.3:80", "1.1.1.1, 198.51.100.1, 10.9.9.9")
	f.Add("203.0.113.9:1234", "198.51.100.1")
	f.Add("[::1]:80", "fe80::1%eth0, ::ffff:198.51.100.7")
	f.Add("\x00", "\xff,,")
	f.Add("10.0.0.1", " , 10.0.0.2")
	res := Resolver{Trusted: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}}
	f.Fuzz(func(t *testing.T, peer, xff string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = peer
		r.Header.Set("X-Forwarded-For", xff)
		got := res.Of(r)
		p := parseHostPort(peer)
		switch {
		case !res.trusted(p) && got != p:
			t.Fatalf("untrusted peer %q: %v", peer, got)
		case got.Zone() != "":
			t.Fatalf("%q %q: zoned %v", peer, xff, got)
		case res.trusted(got) && got != p:
			t.Fatalf("%q %q: a trusted proxy %v from the header", peer, xff, got)
		}
	})
}
