// Package scope is the fixed vocabulary of API permissions shared by API
// keys and OAuth clients. `*:write` deliberately does not imply `*:read`.
package scope

import (
	"fmt"
	"slices"
	"strings"
)

// Scope names one permission.
type Scope string

// The complete list (docs/api.md#roles-and-permissions).
const (
	LinksRead     Scope = "links:read"
	LinksWrite    Scope = "links:write"
	AnalyticsRead Scope = "analytics:read"
	WebhooksRead  Scope = "webhooks:read"
	WebhooksWrite Scope = "webhooks:write"
	DomainsRead   Scope = "domains:read"
	DomainsWrite  Scope = "domains:write"
	MembersRead   Scope = "members:read"
	MembersWrite  Scope = "members:write"
	AuditRead     Scope = "audit:read"
)

// All lists every scope in display order.
var All = []Scope{LinksRead, LinksWrite, AnalyticsRead, WebhooksRead, WebhooksWrite, DomainsRead, DomainsWrite, MembersRead, MembersWrite, AuditRead}

// Describe says in a few words what a scope allows, for the UI.
func Describe(s Scope) string {
	switch s {
	case LinksRead:
		return "read links and QR codes"
	case LinksWrite:
		return "create, re-point and delete links"
	case AnalyticsRead:
		return "read scans and analytics"
	case WebhooksRead:
		return "read webhook subscriptions and deliveries"
	case WebhooksWrite:
		return "manage webhook subscriptions"
	case DomainsRead:
		return "read custom domains"
	case DomainsWrite:
		return "add, verify and remove custom domains"
	case MembersRead:
		return "read the workspace's members"
	case MembersWrite:
		return "invite, change and remove members"
	case AuditRead:
		return "read the audit log"
	}
	return ""
}

// Parse validates a list of scope names: non-empty, known, no duplicates.
// It returns the scopes in canonical order.
func Parse(names []string) ([]Scope, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("must list at least one scope (%s)", strings.Join(Strings(All), ", "))
	}
	seen := map[Scope]bool{}
	for _, n := range names {
		s := Scope(n)
		if !slices.Contains(All, s) {
			return nil, fmt.Errorf("%q is not a scope; use %s", n, strings.Join(Strings(All), ", "))
		}
		if seen[s] {
			return nil, fmt.Errorf("%q is listed twice", n)
		}
		seen[s] = true
	}
	var out []Scope
	for _, s := range All {
		if seen[s] {
			out = append(out, s)
		}
	}
	return out, nil
}

// Strings converts scopes to their names.
func Strings(ss []Scope) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// Has reports whether granted includes want.
func Has(granted []Scope, want Scope) bool { return slices.Contains(granted, want) }
