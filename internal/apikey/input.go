package apikey

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/text"
	"github.com/linkqr/linkqr/internal/validate"
)

// Bounds of an API key (docs/api.md#rate-limits).
const (
	DefaultRateLimit = 600
	MinRateLimit     = 1
	MaxRateLimit     = 100000
	MaxAllowlist     = 100
	MaxNameLen       = 100
)

// NameRule is a key's (and an OAuth client's) name: 1 to 100 characters
// of text, trimmed.
var NameRule = text.Rule{Min: 1, Max: MaxNameLen, Trim: true}

// CreateInput is what a user asks for when minting a key.
type CreateInput struct {
	Name               string
	Scopes             []string
	RateLimitPerMinute *int     // nil: DefaultRateLimit
	IPAllowlist        []string // CIDRs or single addresses; empty: any address
}

// createParams is a validated CreateInput.
type createParams struct {
	name      string
	scopes    []scope.Scope
	rateLimit int
	allowlist []netip.Prefix
}

// Validate checks the input without minting anything, so callers can
// reject bad input before touching the database.
func (in CreateInput) Validate() error {
	_, err := in.validate()
	return err
}

// validate checks every field and reports all problems at once, with JSON
// pointers (/name, /scopes, /rate_limit_per_minute, /ip_allowlist/<i>).
func (in CreateInput) validate() (createParams, error) {
	var errs validate.Errors
	name, err := NameRule.Parse(in.Name)
	errs.Check("/name", err)
	p := createParams{name: name.String(), rateLimit: DefaultRateLimit}
	scopes, err := scope.Parse(in.Scopes)
	if err != nil {
		errs.Add("/scopes", err.Error())
	}
	p.scopes = scopes
	if in.RateLimitPerMinute != nil {
		p.rateLimit = *in.RateLimitPerMinute
		if p.rateLimit < MinRateLimit || p.rateLimit > MaxRateLimit {
			errs.Add("/rate_limit_per_minute", fmt.Sprintf("must be a whole number from %d to %d", MinRateLimit, MaxRateLimit))
		}
	}
	if len(in.IPAllowlist) > MaxAllowlist {
		errs.Add("/ip_allowlist", fmt.Sprintf("must have at most %d entries", MaxAllowlist))
	}
	seen := map[netip.Prefix]bool{}
	for i, raw := range in.IPAllowlist {
		pfx, err := ParseCIDR(raw)
		pointer := fmt.Sprintf("/ip_allowlist/%d", i)
		switch {
		case err != nil:
			errs.Add(pointer, err.Error())
		case seen[pfx]:
			errs.Add(pointer, fmt.Sprintf("%s is listed twice", pfx))
		default:
			seen[pfx] = true
			p.allowlist = append(p.allowlist, pfx)
		}
	}
	return p, errs.Err()
}

// ParseCIDR accepts an IPv4/IPv6 CIDR, or a single address meaning just that
// host. A CIDR with host bits set is refused rather than silently widened.
func ParseCIDR(raw string) (netip.Prefix, error) {
	s := strings.TrimSpace(raw)
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR such as 203.0.113.0/24 or 2001:db8::/32", raw)
		}
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a CIDR such as 203.0.113.0/24 or 2001:db8::/32", raw)
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("%q has host bits set; did you mean %s?", raw, p.Masked())
	}
	return p, nil
}

// AllowedFrom reports whether addr is inside the allowlist (an empty list
// allows every address).
func AllowedFrom(allowlist []netip.Prefix, addr netip.Addr) bool {
	if len(allowlist) == 0 {
		return true
	}
	for _, p := range allowlist {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}
