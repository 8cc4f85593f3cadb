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
	}
}
