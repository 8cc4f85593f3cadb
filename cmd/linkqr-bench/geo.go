package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"time"

	"github.com/linkqr/linkqr/internal/geo"
)

// The country rounds (issue #23): every scan's country is decided on the
// redirect's hot path, by a lookup of the client address in memory, and it
// must cost at most targetGeo of the redirect's throughput. linkqr trusts
// loopback as a proxy (LINKQR_TRUSTED_PROXIES), as the load generator
// stands in for one, and two loads next to each other in every round send
// the same requests to the same links with an X-Forwarded-For each:
//
//   - geo: a public address, one of geoAddrs visitors' addresses, which the
//     built-in data places in a country, so each request is looked up;
//   - no-geo: that address's private twin (twinAddr): the same family and
//     the same length of text, so both sides parse the same header and
//     pass the same number of distinct visitors to the fold, and only the
//     lookup differs (a private address is Unknown without one).
//
// The default round keeps sending no X-Forwarded-For, so its figures, and
// the linkqr/bare and custom/default ratios, mean what they meant before.
const (
	geoAddrs   = 1250 // 10,000 links are 8 turns of them
	geoV6Share = 0.2  // of geoAddrs, IPv6; the rest IPv4
	targetGeo  = 0.05 // geo/no-geo at least 1-targetGeo
	// targetGeoKnown is the share of the geo rounds' human scans that
	// must carry a country (every address of the fixture has one).
	targetGeoKnown = 0.99
)

// geoV6Blocks are the IPv6 blocks the regional registries hand out from
// (2000::/3 is mostly unallocated), as internal/geo's benchmark uses.
var geoV6Blocks = []netip.Prefix{
	netip.MustParsePrefix("2001::/16"), netip.MustParsePrefix("2003::/18"),
	netip.MustParsePrefix("2400::/12"), netip.MustParsePrefix("2600::/12"),
	netip.MustParsePrefix("2800::/12"), netip.MustParsePrefix("2a00::/12"),
	netip.MustParsePrefix("2c00::/12"),
}

// visitorAddrs returns n public addresses, the same on every run, that the
// built-in data places in a country (about geoV6Share of them IPv6, the
// rest IPv4 from every public /8 in turn), each with its private twin, and
// the number of countries they cover. IPv4 and IPv6 addresses alternate as
// their shares allow, so any stretch of the rotation mixes both.
func visitorAddrs(n int) (public, private []netip.Addr, countries int) {
	l := geo.Builtin()
	rng := rand.New(rand.NewPCG(23, 27))
	seen := map[netip.Addr]bool{}
	byCountry := map[geo.Country]bool{}
	var slash8 []byte
	for a := 1; a < 224; a++ {
		switch a {
		case 10, 100, 127, 169, 172, 192: // private, CGNAT, loopback, link-local (their public parts are few)
			continue
		}
		slash8 = append(slash8, byte(a))
	}
	v6Want := int(float64(n)*geoV6Share + 0.5)
	next8, v6 := 0, 0
	for len(public) < n {
		var a netip.Addr
		if v6 < v6Want && v6*n <= len(public)*v6Want { // IPv6 while behind its share
			p := geoV6Blocks[rng.IntN(len(geoV6Blocks))]
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
			a = netip.AddrFrom4([4]byte{slash8[next8%len(slash8)], byte(u >> 16), byte(u >> 8), byte(u)})
			next8++
		}
		c := l.Country(a)
		t, ok := twinAddr(a)
		if !c.Known() || !ok || seen[a] || seen[t] || l.Country(t).Known() {
			continue
		}
		seen[a], seen[t], byCountry[c] = true, true, true
		public, private = append(public, a), append(private, t)
		if a.Is6() {
			v6++
		}
	}
	return public, private, len(byCountry)
}

// twinAddr is a private address of a's family whose text is as long as
// a's: fd00::/8 for IPv6 (a's first byte replaced, so its text keeps its
// groups and its "::"), 10.0.0.0/8 or 192.168.0.0/16 for IPv4 (octets of
// the digits needed, from a's own). An IPv4 address of seven characters
// ("8.8.8.8") has none: 10.0.0.0/8's shortest is eight.
func twinAddr(a netip.Addr) (netip.Addr, bool) {
	if a.Is6() {
		b := a.As16()
		b[0] = 0xfd
		t := netip.AddrFrom16(b)
		return t, len(t.String()) == len(a.String())
	}
	o := a.As4()
	digits := len(a.String()) - 3 // without the dots
	octet := func(width int, from byte) byte {
		switch width {
		case 1:
			return from % 10
		case 2:
			return 10 + from%90
		}
		return 100 + from%156
	}
	// widths spreads d digits over k octets of 1–3 digits each.
	widths := func(d, k int) []int {
		w := make([]int, k)
		for i := range w {
			w[i] = min(3, d-(k-1-i))
			d -= w[i]
		}
		return w
	}
	var t [4]byte
	switch {
	case digits >= 5 && digits <= 11: // 10.x.y.z: 2 digits, then 3 to 9
		w := widths(digits-2, 3)
		t = [4]byte{10, octet(w[0], o[1]), octet(w[1], o[2]), octet(w[2], o[3])}
	case digits == 12: // 192.168.y.z: 6 digits, then 6
		t = [4]byte{192, 168, octet(3, o[2]), octet(3, o[3])}
	default:
		return netip.Addr{}, false
	}
	twin := netip.AddrFrom4(t)
	return twin, len(twin.String()) == len(a.String())
}

// forwardedFor is the X-Forwarded-For of each of n requests: addrs in
// rotation.
func forwardedFor(addrs []netip.Addr, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = addrs[i%len(addrs)].String()
	}
	return out
}

// countryCheck is what the scans of one country round recorded: how
// many human scans it left, and how many of them carry a country.
type countryCheck struct {
	Scans, Known int64
	Err          error
}

// window is when one load ran, warm-up included: the scans it caused
// occurred within it.
type window struct{ From, To time.Time }

// countryScans counts the human scans that occurred in each window, and
// those of them with a country, straight from linkqr's scans table.
func (b *bench) countryScans(ctx context.Context, windows []window) ([]countryCheck, error) {
	conn, closeDB, err := b.benchDB(ctx)
	if err != nil {
		return nil, err
	}
	defer closeDB()
	out := make([]countryCheck, len(windows))
	for i, w := range windows {
		err := conn.QueryRow(ctx, `SELECT count(*), count(country) FROM scans WHERE occurred_at >= $1 AND occurred_at <= $2 AND NOT bot`,
			w.From, w.To).Scan(&out[i].Scans, &out[i].Known)
		if err != nil {
			return nil, fmt.Errorf("counting the countries of the scans: %w", err)
		}
	}
	return out, nil
}

// knownShare is c's share of scans with a country, as a percentage for
// the report.
func (c countryCheck) knownShare() string {
	if c.Scans == 0 {
		return "–"
	}
	return strconv.FormatFloat(100*float64(c.Known)/float64(c.Scans), 'f', 2, 64) + " %"
}
