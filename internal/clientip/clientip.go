// Package clientip decides which address a request comes from: the socket
// peer, unless that peer is a trusted proxy, in which case the right-most
// X-Forwarded-For address that is not itself a trusted proxy. Taking the
// right-most untrusted entry means a client cannot spoof its address by
// sending its own X-Forwarded-For.
package clientip

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Resolver resolves client addresses given the trusted proxy ranges.
type Resolver struct {
	Trusted []netip.Prefix
}

// Of returns the client address of r (the zero Addr if unparseable).
func (res Resolver) Of(r *http.Request) netip.Addr {
	peer := parseHostPort(r.RemoteAddr)
	if !res.trusted(peer) {
		return peer
	}
	hops := forwardedFor(r.Header.Values("X-Forwarded-For"))
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(hops[i])
		if err != nil {
			return peer // a malformed chain: believe nothing beyond the proxy
		}
		a = plain(a)
		if !res.trusted(a) {
			return a
		}
	}
	return peer
}

// FromTrustedProxy reports whether r's socket peer is a trusted proxy, whose
// headers about the client (its country, say) may be believed.
func (res Resolver) FromTrustedProxy(r *http.Request) bool {
	return res.trusted(parseHostPort(r.RemoteAddr))
}

func (res Resolver) trusted(a netip.Addr) bool {
	for _, p := range res.Trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func forwardedFor(values []string) []string {
	var hops []string
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				hops = append(hops, part)
			}
		}
	}
	return hops
}

func parseHostPort(s string) netip.Addr {
	host, _, err := net.SplitHostPort(s)
	if err != nil {
		host = s
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return plain(a)
}

// plain is a without an IPv4-in-IPv6 wrapping or an IPv6 zone ("%eth0",
// which a link-local peer has): a zoned address is contained in no
// prefix, so no allowlist or trusted-proxy range would ever match it.
func plain(a netip.Addr) netip.Addr { return a.Unmap().WithZone("") }
