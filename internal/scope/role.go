package scope

import "slices"

// Role is what a user is in a workspace. The role table below is the one
// place that says what each role may do; every surface (the API, the UI,
// MCP, OAuth consent, key minting) asks it through Permits or Allowed, so a
// credential can never do more than its owner's role allows at that moment
// (docs/api.md#roles-and-permissions).
type Role string

// The roles of a workspace.
const (
	RoleAdmin  Role = "admin"
	RoleMember Role = "member"
)

// ParseRole accepts "admin" and "member".
func ParseRole(s string) (Role, bool) {
	switch Role(s) {
	case RoleAdmin, RoleMember:
		return Role(s), true
	}
	return "", false
}

// ManageWorkspace is the permission to administer the workspace itself:
// rename, export, delete, its QR style, OAuth clients, security settings.
// It is no API scope (scope.Parse refuses it, so no key or token carries
// it): only the role table grants it, to admins, for the browser UI.
const ManageWorkspace Scope = "workspace:manage"

// memberScopes is what a member may do; an admin may do everything.
var memberScopes = []Scope{LinksRead, LinksWrite, AnalyticsRead, DomainsRead, MembersRead}

// Permits reports whether role r allows s. An unknown role allows nothing.
func (r Role) Permits(s Scope) bool {
	switch r {
	case RoleAdmin:
		return s == ManageWorkspace || slices.Contains(All, s)
	case RoleMember:
		return slices.Contains(memberScopes, s)
	}
	return false
}

// Allowed lists the API scopes role r allows, in canonical order.
func (r Role) Allowed() []Scope { return Intersect(All, r) }

// Intersect returns the scopes of granted that role r allows, in the order
// of granted: what a credential may do now.
func Intersect(granted []Scope, r Role) []Scope {
	var out []Scope
	for _, s := range granted {
		if r.Permits(s) {
			out = append(out, s)
		}
	}
	return out
}

// ForbiddenError refuses an action the actor's role does not allow: the
// API answers 403 `forbidden` naming the role needed, the UI its 403 page.
type ForbiddenError struct {
	Scope Scope // what the action needs
	Role  Role  // what the actor is now ("" for no member at all)
}

func (e *ForbiddenError) Error() string {
	if e.Role == "" {
		return "only members of the workspace can do this"
	}
	return "this needs the admin role (" + string(e.Scope) + "); you are a " + string(e.Role) + " of this workspace"
}

// Check returns nil when role r allows s, else a *ForbiddenError.
func (r Role) Check(s Scope) error {
	if r.Permits(s) {
		return nil
	}
	return &ForbiddenError{Scope: s, Role: r}
}
