// Package geo decides the country a scan comes from: a country header set
// by a trusted proxy (a CDN in front already knows it), else an IP lookup in
// memory (a MaxMind-format database file, or the built-in data). The
// address itself is never stored; only the country is.
package geo

// Country is an ISO 3166-1 alpha-2 code in upper case ("DE"), or the zero
// value when the country is unknown. It is two bytes, so a scan carries it
// through the hot path without an allocation.
type Country [2]byte

// Unknown is the country of a scan whose origin could not be told.
var Unknown Country

// ParseCountry reads an ISO 3166-1 alpha-2 code in either case. It reports
// false for anything else, and for the codes that proxies and databases use
// to say "unknown" rather than name a country: XX (Cloudflare), ZZ (ISO's
// user-assigned "unknown"), T1 (Tor, not letters) and the EU/AP/A1/A2
// pseudo-regions of old GeoIP data.
func ParseCountry(s string) (Country, bool) {
	if len(s) != 2 {
		return Unknown, false
	}
	var c Country
	for i := 0; i < 2; i++ {
		b := s[i]
		switch {
		case b >= 'A' && b <= 'Z':
		case b >= 'a' && b <= 'z':
			b -= 'a' - 'A'
		default:
			return Unknown, false
		}
		c[i] = b
	}
	switch string(c[:]) {
	case "XX", "ZZ", "EU", "AP":
		return Unknown, false
	}
	return c, true
}

// Known reports whether c names a country.
func (c Country) Known() bool { return c != Unknown }

// String is the code, or "" when unknown.
func (c Country) String() string {
	if !c.Known() {
		return ""
	}
	return string(c[:])
}

// Ptr is the code as the scan object's nullable country: nil when unknown.
func (c Country) Ptr() *string {
	if !c.Known() {
		return nil
	}
	s := c.String()
	return &s
}
