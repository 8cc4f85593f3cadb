package config

import (
	"fmt"
	"strings"
)

// Roles says which faces of linkqr one process runs, so an operator can
// run many small redirect processes and a few workers without deliveries
// and reports competing with the redirect on the same cores. The zero
// value runs nothing; ParseRoles never returns it.
type Roles struct {
	redirect, api, worker bool
}

// AllRoles is every role in one process, the default.
var AllRoles = Roles{redirect: true, api: true, worker: true}

// RoleNames lists the names ParseRoles accepts, for error messages.
const RoleNames = "all, redirect, api, worker"

// ParseRoles reads a comma-separated list of roles (LINKQR_ROLES,
// `serve --role`); "all" stands for every role, and an empty list is all.
func ParseRoles(s string) (Roles, error) {
	var r Roles
	if strings.TrimSpace(s) == "" {
		return AllRoles, nil
	}
	for _, part := range strings.Split(s, ",") {
		switch strings.ToLower(strings.TrimSpace(part)) {
		case "all":
			r = AllRoles
		case "redirect":
			r.redirect = true
		case "api":
			r.api = true
		case "worker":
			r.worker = true
		default:
			return Roles{}, fmt.Errorf("unknown role %q: the roles are %s (comma-separated)", strings.TrimSpace(part), RoleNames)
		}
	}
	return r, nil
}

// Redirect reports whether the process serves short links.
func (r Roles) Redirect() bool { return r.redirect }

// API reports whether the process serves the API, UI, docs, OAuth and MCP.
func (r Roles) API() bool { return r.api }

// Worker reports whether the process works River jobs and folds scans.
func (r Roles) Worker() bool { return r.worker }

// String lists the roles as ParseRoles reads them.
func (r Roles) String() string {
	if r == AllRoles {
		return "all"
	}
	var names []string
	for _, n := range []struct {
		on   bool
		name string
	}{{r.redirect, "redirect"}, {r.api, "api"}, {r.worker, "worker"}} {
		if n.on {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}
