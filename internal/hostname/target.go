package hostname

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/linkqr/linkqr/internal/validate"
)

// Target is where custom domains point (LINKQR_CUSTOM_DOMAIN_TARGET):
// either a hostname, which a subdomain names in a CNAME record, or the
// IPv4 and IPv6 addresses that A and AAAA records hold. Only ParseTarget
// and TargetOf make one; the zero Target points nowhere.
type Target struct {
	name  string       // lowercase, no final dot; "" when addrs are given
	addrs []netip.Addr // sorted (IPv4 first), unique, without zones
}

// ParseTarget reads LINKQR_CUSTOM_DOMAIN_TARGET: a hostname
// ("links.example.net") or a comma-separated list of IP addresses
// ("192.0.2.10, 2001:db8::10"); never both.
func ParseTarget(raw string) (Target, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return Target{}, validate.Reject("must be a hostname such as links.example.net, or a comma-separated list of IP addresses")
	}
	first, _, list := strings.Cut(raw, ",")
	if _, err := netip.ParseAddr(strings.TrimSpace(first)); err != nil && !list {
		name, err := Parse(raw)
		if err != nil {
			return Target{}, validate.Reject("must be a hostname such as links.example.net, or a comma-separated list of IP addresses; as a hostname it " + err.Error())
		}
		return Target{name: name.String()}, nil
	}
	var t Target
	for part := range strings.SplitSeq(raw, ",") {
		part = strings.TrimSpace(part)
		a, err := netip.ParseAddr(part)
		switch {
		case err != nil:
			return Target{}, validate.Reject("must be a hostname, or a comma-separated list of IP addresses: " + quote(part) + " is not an IP address")
		case a.Zone() != "":
			return Target{}, validate.Reject("must list IP addresses without a zone: " + quote(part))
		case a.IsUnspecified() || a.IsMulticast():
			return Target{}, validate.Reject("must list addresses that visitors can reach: " + quote(part) + " is not one")
		}
		if a = a.Unmap(); !slices.Contains(t.addrs, a) {
			t.addrs = append(t.addrs, a)
		}
	}
	slices.SortFunc(t.addrs, netip.Addr.Compare)
	return t, nil
}

// TargetOf is the default target, the host of LINKQR_BASE_URL: its
// address when it is an IP address, else the name as it is (a
// development install's "localhost" included).
func TargetOf(host string) Target {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if a, err := netip.ParseAddr(host); err == nil && a.Zone() == "" {
		return Target{addrs: []netip.Addr{a.Unmap()}}
	}
	if name, err := Parse(host); err == nil {
		return Target{name: name.String()}
	}
	return Target{name: strings.ToLower(host)}
}

// Name is the hostname to CNAME to, and whether the target is one.
func (t Target) Name() (string, bool) { return t.name, t.name != "" }

// Addrs are the addresses of A and AAAA records (none for a hostname
// target, whose addresses are looked up).
func (t Target) Addrs() []netip.Addr { return slices.Clone(t.addrs) }

// IsZero reports whether t points nowhere.
func (t Target) IsZero() bool { return t.name == "" && len(t.addrs) == 0 }

// String is the target as the configuration spells it.
func (t Target) String() string {
	if t.name != "" {
		return t.name
	}
	s := make([]string, len(t.addrs))
	for i, a := range t.addrs {
		s[i] = a.String()
	}
	return strings.Join(s, ",")
}

func quote(s string) string { return `"` + s + `"` }
