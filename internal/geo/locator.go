package geo

import "net/netip"

// Locator tells the country of an IP address from data in memory. It is
// called on the redirect path, so implementations are safe for concurrent
// use and do not allocate; they answer Unknown for addresses that name no
// place (private, loopback, link-local, unspecified, the zero Addr) and for
// addresses their data does not cover.
type Locator interface {
	Country(addr netip.Addr) Country
}

// public is addr in the form a lookup wants (IPv4 unwrapped from
// ::ffff:a.b.c.d, no zone), and whether it could be anywhere at all: an
// address of a private or special-purpose range has no country, whatever a
// database says about it.
func public(addr netip.Addr) (netip.Addr, bool) {
	addr = addr.Unmap().WithZone("")
	if !addr.IsGlobalUnicast() || addr.IsPrivate() {
		return addr, false
	}
	return addr, true
}
