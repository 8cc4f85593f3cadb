package apikey

import (
	"net/netip"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/scope"
)

// FuzzParseCIDR: an accepted allowlist entry is a prefix without host bits
// or zone, which reads back as itself.
func FuzzParseCIDR(f *testing.F) {
	for _, s := range []string{"203.0.113.0/24", "203.0.113.7", "2001:db8::/32", "::ffff:10.0.0.1", "fe80::1%eth0", "10.0.0.1/33",
		"203.0.113.7/24", " 10.0.0.0/8 ", "\x00", "1.2.3.4/-1", "::/0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseCIDR(s)
		if err != nil {
			return
		}
		if !p.IsValid() || p.Masked() != p || p.Addr().Zone() != "" {
			t.Fatalf("%q accepted as %v", s, p)
		}
		if back, err := netip.ParsePrefix(p.String()); err != nil || back != p {
			t.Fatalf("%q: %v reads back as %v, %v", s, p, back, err)
		}
	})
}

// FuzzCreateInput: what validates has a storable name of 1 to 100
// characters, known scopes once each, a limit in range and an allowlist of
// parsed prefixes.
func FuzzCreateInput(f *testing.F) {
	f.Add("CI", "links:read,links:write", 600, "203.0.113.0/24")
	f.Add(" \x00 ", "links:read,links:read", 0, "\xff")
	f.Add("\xed\xa0\x80", "", 100001, "")
	f.Add(strings.Repeat("é", 100), "webhooks:write", 1, "::1,10.0.0.0/8")
	f.Fuzz(func(t *testing.T, name, scopes string, limit int, allowlist string) {
		in := CreateInput{Name: name, Scopes: strings.Split(scopes, ","), RateLimitPerMinute: &limit}
		if allowlist != "" {
			in.IPAllowlist = strings.Split(allowlist, ",")
		}
		p, err := in.validate()
		if err != nil {
			return
		}
		if !utf8.ValidString(p.name) || strings.ContainsRune(p.name, 0) || p.name != strings.TrimSpace(name) ||
			p.name == "" || utf8.RuneCountInString(p.name) > MaxNameLen {
			t.Fatalf("name %q accepted as %q", name, p.name)
		}
		if len(p.scopes) == 0 || len(p.scopes) != len(in.Scopes) {
			t.Fatalf("scopes %q accepted as %v", scopes, p.scopes)
		}
		for _, s := range p.scopes {
			if !scope.Has(scope.All, s) {
				t.Fatalf("unknown scope %q accepted", s)
			}
		}
		if p.rateLimit < MinRateLimit || p.rateLimit > MaxRateLimit || len(p.allowlist) != len(in.IPAllowlist) {
			t.Fatalf("limit %d, allowlist %v accepted", p.rateLimit, p.allowlist)
		}
	})
}
