package geo

import (
	"net/netip"

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

// builtin looks addresses up in iploc's tables, which are compiled into
// the binary: no file to download or keep current at run time.
type builtin struct{}

// Builtin is the Locator of the built-in data. Its first call unpacks the
// IPv6 table (iploc does it once per process, and lookups wait for it), so
// a process that calls Builtin at start-up does not pay for it on its
// first IPv6 scan. Setting IPLOC_IPV4ONLY in the environment skips that
// table: every IPv6 address is then Unknown.
func Builtin() Locator {
	iploc.IPCountry(netip.IPv6Loopback())
	return builtin{}
}

func (builtin) Country(addr netip.Addr) Country {
	addr, ok := public(addr)
	if !ok {
		return Unknown
	}
	c, _ := ParseCountry(iploc.IPCountry(addr))
	return c
}
