package geo

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

var proxies = netip.MustParsePrefix("10.0.0.0/8")

// behindProxy trusts the peers in proxies, as LINKQR_TRUSTED_PROXIES would.
func behindProxy(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && proxies.Contains(ap.Addr())
}

// fixed is a Locator that answers one country for any address but the zero one.
type fixed Country

func (f fixed) Country(a netip.Addr) Country {
	if !a.IsValid() {
		return Unknown
	}
	return Country(f)
}

func TestResolver(t *testing.T) {
	t.Parallel()
	const proxy, direct = "10.0.0.1:443", "198.51.100.7:5000"
	jp := fixed{'J', 'P'}
	cases := []struct {
		name    string
		res     *Resolver
		peer    string
		headers []string // values of CF-IPCountry
		client  string
		want    string
	}{
		{"trusted proxy's header", NewResolver("CF-IPCountry", behindProxy, jp), proxy, []string{"DE"}, "2003::1", "DE"},
		{"lower case", NewResolver("CF-IPCountry", behindProxy, jp), proxy, []string{"de"}, "2003::1", "DE"},
		{"header name in any case", NewResolver("cf-ipcountry", behindProxy, jp), proxy, []string{"FR"}, "2003::1", "FR"},
		{"untrusted peer: header ignored", NewResolver("CF-IPCountry", behindProxy, jp), direct, []string{"DE"}, "198.51.100.7", "JP"},
		{"untrusted peer, no locator", NewResolver("CF-IPCountry", behindProxy, nil), direct, []string{"DE"}, "198.51.100.7", ""},
		{"XX: lookup", NewResolver("CF-IPCountry", behindProxy, jp), proxy, []string{"XX"}, "2003::1", "JP"},
		{"T1 (Tor): lookup", NewResolver("CF-IPCountry", behindProxy, jp), proxy, []string{"T1"}, "2003::1", "JP"},
		{"garbage: lookup", NewResolver("CF-IPCountry", behindProxy, jp), proxy, []string{"Germany"}, "2003::1", "JP"},
		{"empty: lookup", NewResolver("CF-IPCountry", behindProxy, jp), proxy, []string{""}, "2003::1", "JP"},
		{"two values: lookup", NewResolver("CF-IPCountry", behindProxy, jp), proxy, []string{"DE", "FR"}, "2003::1", "JP"},
		{"no header: lookup", NewResolver("CF-IPCountry", behindProxy, jp), proxy, nil, "2003::1", "JP"},
		{"no header configured", NewResolver("", behindProxy, jp), proxy, []string{"DE"}, "2003::1", "JP"},
		{"no trust function", NewResolver("CF-IPCountry", nil, jp), proxy, []string{"DE"}, "2003::1", "JP"},
		{"no header, no locator", NewResolver("", nil, nil), direct, nil, "198.51.100.7", ""},
		{"literal Resolver", &Resolver{Header: "CF-IPCountry", FromTrustedProxy: behindProxy}, proxy, []string{"DE"}, "2003::1", "DE"},
		{"zero client", NewResolver("CF-IPCountry", behindProxy, jp), direct, nil, "", ""},
		{"built-in lookup", NewResolver("CF-IPCountry", behindProxy, Builtin()), direct, []string{"US"}, "80.128.0.1", "DE"},
	}
	for _, tc := range cases {
		req := httptest.NewRequest("GET", "/abc", nil)
		req.RemoteAddr = tc.peer
		for _, v := range tc.headers {
			req.Header.Add("Cf-Ipcountry", v)
		}
		var client netip.Addr
		if tc.client != "" {
			client = netip.MustParseAddr(tc.client)
		}
		if got := tc.res.Country(req, client).String(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestResolverAllocs(t *testing.T) {
	// Not parallel: AllocsPerRun counts the whole process's allocations.
	r := NewResolver("CF-IPCountry", behindProxy, Builtin())
	header := httptest.NewRequest("GET", "/abc", nil)
	header.RemoteAddr = "10.0.0.1:443"
	header.Header.Set("CF-IPCountry", "DE")
	lookup := httptest.NewRequest("GET", "/abc", nil)
	lookup.RemoteAddr = "198.51.100.7:5000"
	lookup.Header.Set("CF-IPCountry", "DE")
	client := netip.MustParseAddr("2003::1")
	if n := testing.AllocsPerRun(1000, func() { r.Country(header, client); r.Country(lookup, client) }); n != 0 {
		t.Errorf("%v allocations per header and lookup pair", n)
	}
}

func BenchmarkResolver(b *testing.B) {
	r := NewResolver("CF-IPCountry", behindProxy, Builtin())
	v4 := benchAddrs(1024, false)
	for _, bc := range []struct {
		name, peer string
	}{
		{"header", "10.0.0.1:443"},      // a trusted proxy's CF-IPCountry
		{"lookup", "198.51.100.7:5000"}, // an untrusted peer: the built-in data
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", "/abc", nil)
			req.RemoteAddr = bc.peer
			req.Header.Set("CF-IPCountry", "DE")
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r.Country(req, v4[i&1023])
				i++
			}
		})
	}
}
