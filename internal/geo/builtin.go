package geo

import (
	_ "embed"
	"encoding/binary"
	"net/netip"
	"sort"

	"github.com/phuslu/iploc"
)

// BuiltinVersion is the version of github.com/phuslu/iploc compiled in; its
// last eight digits are the date of the IP2Location LITE data it embeds.
// Upgrading the module (go get github.com/phuslu/iploc@latest) refreshes it.
const BuiltinVersion = iploc.Version

// BuiltinDate is the date of the built-in data as YYYY-MM-DD, read from
// BuiltinVersion ("v1.0.20260915" → "2026-09-15"), or "" if the module ever
// changes its version scheme.
func BuiltinDate() string {
	v := BuiltinVersion
	if len(v) < 8 {
		return ""
	}
	d := v[len(v)-8:]
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return ""
		}
	}
	return d[:4] + "-" + d[4:6] + "-" + d[6:]
}

// builtin looks addresses up in data compiled into the binary: no file to
// download or keep current at run time. IPv4 addresses are iploc's own
// lookup (its table lies in the binary as it is); IPv6 addresses are looked
// up in ipv6.bin, made from iploc's IPv6 table by gen_ipv6.go. iploc
// unpacks that table into the heap on its first IPv6 lookup, 11 MB that the
// garbage collector then counts in every heap goal (about twice that in
// the process's memory); ipv6.bin drops the IPv4-mapped part and the
// second half of most starts, 4 MB read where it lies in the binary.
type builtin struct{}

//go:generate go run gen_ipv6.go

//go:embed ipv6.bin
var ipv6Data []byte

// ipv6Whole's starts (8 bytes each: a start's first half, the second being
// zero), ipv6Sub's (16 bytes: both halves), then the countries of each.
var (
	ipv6WholeStarts, ipv6Rest = split(ipv6Data, 8*ipv6Whole)
	ipv6SubStarts, ipv6CCs    = split(ipv6Rest, 16*ipv6Sub)
	ipv6WholeCC, ipv6SubCC    = split(ipv6CCs, ipv6Whole)
)

func split(b []byte, n int) ([]byte, []byte) { return b[:n], b[n:] }

// wholeStart is whole start i's first half; subStart is start i inside a /64.
func wholeStart(i int) uint64 { return binary.LittleEndian.Uint64(ipv6WholeStarts[8*i:]) }
func subStart(i int) (hi, lo uint64) {
	return binary.LittleEndian.Uint64(ipv6SubStarts[16*i:]), binary.LittleEndian.Uint64(ipv6SubStarts[16*i+8:])
}

// ipv6Countries is ipv6Codes parsed: Unknown for the data's "unknown" codes.
var ipv6Countries = func() (cs [len(ipv6Codes)]Country) {
	for i, s := range ipv6Codes {
		cs[i], _ = ParseCountry(s)
	}
	return cs
}()

// Builtin is the Locator of the built-in data.
func Builtin() Locator { return builtin{} }

func (builtin) Country(addr netip.Addr) Country {
	addr, ok := public(addr)
	if !ok {
		return Unknown
	}
	if addr.Is4() {
		c, _ := ParseCountry(iploc.IPCountry(addr))
		return c
	}
	b := addr.As16()
	return ipv6Country(binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:]))
}

// ipv6Country is the country of the range with the greatest start at or
// below the address hi:lo: the greater of the last whole start at or
// below hi and the last start inside a /64 at or below hi:lo.
func ipv6Country(hi, lo uint64) Country {
	// The first whole start above hi is at i, the first start inside a /64
	// above hi:lo at k.
	i := sort.Search(ipv6Whole, func(h int) bool { return wholeStart(h) > hi })
	k := sort.Search(ipv6Sub, func(h int) bool {
		shi, slo := subStart(h)
		return shi > hi || shi == hi && slo > lo
	})
	switch {
	case i == 0 && k == 0: // below every start: the addresses left out
		return Unknown
	case k == 0:
		return ipv6Countries[ipv6WholeCC[i-1]]
	case i == 0:
		return ipv6Countries[ipv6SubCC[k-1]]
	}
	// A whole start w:0 is above a start s:lo inside a /64 when w > s.
	if shi, _ := subStart(k - 1); wholeStart(i-1) > shi {
		return ipv6Countries[ipv6WholeCC[i-1]]
	}
	return ipv6Countries[ipv6SubCC[k-1]]
}
