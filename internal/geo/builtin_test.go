package geo

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/phuslu/iploc"
)

// The expected countries were checked against iploc v1.0.20260915; they are
// the home ranges of large, long-lived networks, so a data refresh should
// not move them.
func TestBuiltin(t *testing.T) {
	t.Parallel()
	l := Builtin()
	cases := map[string]string{
		"8.8.8.8":              "US", // Google Public DNS
		"80.128.0.1":           "DE", // Deutsche Telekom
		"91.0.0.1":             "DE", // Deutsche Telekom
		"1.0.16.1":             "JP",
		"81.2.69.142":          "GB",
		"193.0.0.1":            "NL", // RIPE NCC
		"2003::1":              "DE", // Deutsche Telekom 2003::/19
		"2001:4860:4860::8888": "US", // Google Public DNS
		"2001:200::1":          "JP", // WIDE
		"::ffff:8.8.8.8":       "US", // IPv4 in IPv6, as a dual-stack socket reports it
		"::ffff:80.128.0.1":    "DE",
		"2003::1%eth0":         "DE", // a zone is no part of the address
		"127.0.0.1":            "",
		"::1":                  "",
		"10.1.2.3":             "",
		"172.16.0.1":           "",
		"192.168.1.1":          "",
		"fd00::1":              "",
		"fe80::1":              "",
		"169.254.1.1":          "",
		"0.0.0.0":              "",
		"::":                   "",
		"224.0.0.1":            "",
		"255.255.255.255":      "",
		"::ffff:10.0.0.1":      "",
		"2001:db8::1":          "", // documentation: in no registry
		"100.64.0.1":           "", // carrier-grade NAT
	}
	for s, want := range cases {
		if got := l.Country(netip.MustParseAddr(s)).String(); got != want {
			t.Errorf("Builtin().Country(%s) = %q, want %q", s, got, want)
		}
	}
	if got := l.Country(netip.Addr{}); got != Unknown {
		t.Errorf("zero Addr: %q", got.String())
	}
}

func TestBuiltinDate(t *testing.T) {
	t.Parallel()
	if BuiltinVersion != "v1.0.20260915" || BuiltinDate() != "2026-09-15" {
		// The module was upgraded: TestBuiltin's countries were checked
		// against the old data.
		t.Errorf("built-in data %s (%q): check TestBuiltin's countries, then this test", BuiltinVersion, BuiltinDate())
	}
	// The operator's documentation says how fresh the data is.
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{BuiltinVersion, BuiltinDate()} {
		if !strings.Contains(string(doc), s) {
			t.Errorf("docs/operations.md does not name the built-in data's %q", s)
		}
	}
}

// TestBuiltinIPv6IsIploc checks ipv6.bin against the data it was made
// from: at every start it holds and at the address just below it, and at
// random addresses, the country is iploc's own answer.
func TestBuiltinIPv6IsIploc(t *testing.T) {
	t.Parallel()
	if ipv6Version != iploc.Version {
		t.Fatalf("ipv6.bin was made from iploc %s, the module is %s: run go generate ./internal/geo", ipv6Version, iploc.Version)
	}
	l := Builtin()
	check := func(hi, lo uint64) {
		var b [16]byte
		binary.BigEndian.PutUint64(b[:8], hi)
		binary.BigEndian.PutUint64(b[8:], lo)
		a := netip.AddrFrom16(b)
		want, _ := ParseCountry(iploc.IPCountry(a))
		if _, ok := public(a); !ok {
			want = Unknown
		}
		if got := l.Country(a); got != want {
			t.Fatalf("%s: %q, iploc says %q", a, got.String(), want.String())
		}
	}
	below := func(hi, lo uint64) (uint64, uint64) {
		if lo == 0 {
			return hi - 1, ^uint64(0)
		}
		return hi, lo - 1
	}
	for i := range ipv6Whole {
		hi := wholeStart(i)
		check(hi, 0)
		check(below(hi, 0))
	}
	for i := range ipv6Sub {
		hi, lo := subStart(i)
		check(hi, lo)
		check(below(hi, lo))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		check(rng.Uint64()>>3|1<<61, rng.Uint64()) // 2000::/3, the global unicast space
		check(rng.Uint64()>>48, rng.Uint64())      // below it, where little is
	}
}

func TestBuiltinAllocs(t *testing.T) {
	// Not parallel: AllocsPerRun counts the whole process's allocations.
	l := Builtin()
	v4, v6 := netip.MustParseAddr("80.128.0.1"), netip.MustParseAddr("2003::1")
	if n := testing.AllocsPerRun(1000, func() { l.Country(v4); l.Country(v6) }); n != 0 {
		t.Errorf("%v allocations per lookup pair", n)
	}
}

// benchAddrs are n addresses of visitors, the same on every run: random
// addresses (IPv6 in the blocks the regional registries hand out) that the
// built-in data places in a country, as a visitor's address is.
func benchAddrs(n int, v6 bool) []netip.Addr {
	l := Builtin()
	rng := rand.New(rand.NewPCG(23, 42))
	blocks := []netip.Prefix{
		netip.MustParsePrefix("2001::/16"), netip.MustParsePrefix("2003::/18"),
		netip.MustParsePrefix("2400::/12"), netip.MustParsePrefix("2600::/12"),
		netip.MustParsePrefix("2800::/12"), netip.MustParsePrefix("2a00::/12"),
		netip.MustParsePrefix("2c00::/12"),
	}
	out := make([]netip.Addr, 0, n)
	for len(out) < n {
		var a netip.Addr
		if v6 {
			p := blocks[rng.IntN(len(blocks))]
			var b [16]byte
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			base := p.Addr().As16()
			for i := 0; i < p.Bits(); i++ { // keep the prefix's bits
				mask := byte(0x80 >> (i % 8))
				b[i/8] = b[i/8]&^mask | base[i/8]&mask
			}
			a = netip.AddrFrom16(b)
		} else {
			u := rng.Uint32()
			a = netip.AddrFrom4([4]byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)})
		}
		if l.Country(a).Known() {
			out = append(out, a)
		}
	}
	return out
}

func BenchmarkBuiltin(b *testing.B) {
	l := Builtin()
	for _, bc := range []struct {
		name string
		v6   bool
	}{{"v4", false}, {"v6", true}} {
		b.Run(bc.name, func(b *testing.B) {
			addrs := benchAddrs(1024, bc.v6)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				l.Country(addrs[i&1023])
				i++
			}
		})
	}
}
