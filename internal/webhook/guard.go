package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// ErrNotPublic is returned when a webhook URL's host is, or resolves to, an
// address that is not on the public internet.
var ErrNotPublic = errors.New("address is not public")

// Resolver looks up a host's addresses; *net.Resolver satisfies it, and
// tests inject a fake to play DNS rebinding.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// nonPublic are the ranges a webhook may never reach (unless private
// addresses are allowed): IANA special-purpose registries for IPv4 and IPv6,
// minus nothing. IPv4-mapped IPv6 addresses are unmapped before the check,
// and NAT64 addresses are checked by the IPv4 address they embed.
var nonPublic = mustPrefixes(
	"0.0.0.0/8",       // "this network"
	"10.0.0.0/8",      // RFC 1918
	"100.64.0.0/10",   // CGNAT
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local
	"172.16.0.0/12",   // RFC 1918
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // TEST-NET-1
	"192.88.99.0/24",  // 6to4 relay anycast (deprecated)
	"192.168.0.0/16",  // RFC 1918
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // TEST-NET-2
	"203.0.113.0/24",  // TEST-NET-3
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, includes 255.255.255.255 broadcast
	"::/96",           // unspecified, loopback, IPv4-compatible (deprecated)
	"100::/64",        // discard-only
	"2001:db8::/32",   // documentation
	"fc00::/7",        // unique local
	"fe80::/10",       // link-local
	"fec0::/10",       // site-local (deprecated)
	"ff00::/8",        // multicast
	"2001:2::/48",     // benchmarking
	"3fff::/20",       // documentation (RFC 9637)
	"5f00::/16",       // SRv6 SIDs
	"64:ff9b:1::/48",  // local-use NAT64
)

// nat64 is the well-known NAT64 prefix: its last 32 bits are an IPv4 address.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Public reports whether a is a public unicast address a webhook may be
// delivered to.
func Public(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		return false
	}
	a = a.Unmap()
	if a.Is6() && nat64.Contains(a) {
		b := a.As16()
		return Public(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsMulticast() || a.IsUnspecified() || !a.IsGlobalUnicast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// Guard keeps webhook requests away from the service's own network (SSRF).
// The host is checked when a subscription is saved, and every connection
// is checked again by the dialer's Control hook on the address actually
// being connected to, so a DNS answer that changes after the check (DNS
// rebinding) cannot reach a private address.
type Guard struct {
	// AllowPrivate lifts the address checks (LINKQR_WEBHOOK_ALLOW_PRIVATE),
	// for development and tests against local receivers.
	AllowPrivate bool
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
}

func (g *Guard) resolver() Resolver {
	if g.Resolver == nil {
		return net.DefaultResolver
	}
	return g.Resolver
}

// CheckHost resolves host (a literal IP is checked as it is) and refuses it
// unless every address is public.
func (g *Guard) CheckHost(ctx context.Context, host string) error {
	if g.AllowPrivate {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if !Public(a) {
			return fmt.Errorf("%s: %w", a, ErrNotPublic)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := g.resolver().LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("resolve %s: no addresses", host)
	}
	for _, a := range addrs {
		if !Public(a) {
			return fmt.Errorf("%s resolves to %s: %w", host, a.Unmap(), ErrNotPublic)
		}
	}
	return nil
}

// control is the net.Dialer hook: it runs after name resolution, just
// before connect, with the address actually dialled.
func (g *Guard) control(_, address string, _ syscall.RawConn) error {
	if g.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refusing to connect to %q: %w", address, ErrNotPublic)
	}
	if !Public(ap.Addr()) {
		return fmt.Errorf("refusing to connect to %s: %w", ap.Addr().Unmap(), ErrNotPublic)
	}
	return nil
}

// DialContext resolves addr's host with the guard's resolver and connects
// to the first address that accepts, each connection vetted by control.
// No proxy is ever involved: the transport using it has Proxy nil.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: 5 * time.Second, Control: g.control}
	if _, err := netip.ParseAddr(host); err == nil {
		return d.DialContext(ctx, network, addr)
	}
	addrs, err := g.resolver().LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	var firstErr error
	for _, a := range addrs {
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}
