package geo

import (
	"net/http"
	"net/netip"
	"net/textproto"
)

// Resolver decides the country of a request: the country header of a
// trusted proxy (a CDN already knows it, from better data), else a lookup
// of the client address. Its fields are not changed once it serves.
type Resolver struct {
	// Header is the request header a trusted proxy puts the country in,
	// such as Cloudflare's "CF-IPCountry"; "" means none.
	Header string
	// FromTrustedProxy reports whether the request's socket peer is a
	// trusted proxy. Anyone else can send the header too, so only a
	// trusted peer's is believed; nil trusts no one.
	FromTrustedProxy func(*http.Request) bool
	// Locator looks the client address up; nil means no lookups.
	Locator Locator

	key string // Header canonicalised, so a lookup is one map access
}

// NewResolver is a Resolver whose header name is canonicalised once rather
// than on every request.
func NewResolver(header string, fromTrustedProxy func(*http.Request) bool, l Locator) *Resolver {
	r := &Resolver{Header: header, FromTrustedProxy: fromTrustedProxy, Locator: l}
	if header != "" {
		r.key = textproto.CanonicalMIMEHeaderKey(header)
	}
	return r
}

// Country is the country of req, whose client address (after the trusted
// proxies' X-Forwarded-For) is client. The header counts only when it
// comes from a trusted proxy and holds exactly one country code; "XX",
// "T1" (Tor) and other ways of saying "unknown" fall through to the lookup.
func (r *Resolver) Country(req *http.Request, client netip.Addr) Country {
	if c, ok := r.fromHeader(req); ok {
		return c
	}
	if r.Locator == nil {
		return Unknown
	}
	return r.Locator.Country(client)
}

func (r *Resolver) fromHeader(req *http.Request) (Country, bool) {
	if r.Header == "" || r.FromTrustedProxy == nil {
		return Unknown, false
	}
	key := r.key
	if key == "" { // a Resolver not made by NewResolver
		key = textproto.CanonicalMIMEHeaderKey(r.Header)
	}
	v := req.Header[key]
	// Two values mean the header was both sent and added along the way:
	// which one the proxy wrote cannot be told, so neither is believed.
	if len(v) != 1 || !r.FromTrustedProxy(req) {
		return Unknown, false
	}
	return ParseCountry(v[0])
}
