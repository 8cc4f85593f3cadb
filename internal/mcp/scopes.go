package mcp

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkqr/linkqr/internal/scope"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// anyCredential marks a tool every valid credential may call.
const anyCredential scope.Scope = ""

// toolScopes is the scope each tool's API operation needs. A credential
// is shown only the tools it can call: a model offered tools that can only
// fail wastes turns, and a user reading the list sees what the key allows.
// A tool missing here is shown to no one (TestToolScopes keeps it complete).
var toolScopes = map[string]scope.Scope{
	"get_workspace":           anyCredential,
	"create_link":             scope.LinksWrite,
	"create_links":            scope.LinksWrite,
	"get_link":                scope.LinksRead,
	"list_links":              scope.LinksRead,
	"search_links":            scope.LinksRead,
	"repoint_link":            scope.LinksWrite,
	"update_link":             scope.LinksWrite,
	"set_link_destinations":   scope.LinksWrite,
	"pause_link":              scope.LinksWrite,
	"resume_link":             scope.LinksWrite,
	"delete_link":             scope.LinksWrite,
	"edit_links":              scope.LinksWrite,
	"delete_links":            scope.LinksWrite,
	"get_link_qr":             scope.LinksRead,
	"get_qr_design":           scope.LinksRead,
	"set_qr_design":           scope.LinksWrite,
	"delete_link_qr_design":   scope.LinksWrite,
	"get_links_qr_zip":        scope.LinksRead,
	"get_link_analytics":      scope.AnalyticsRead,
	"list_link_scans":         scope.AnalyticsRead,
	"list_webhooks":           scope.WebhooksRead,
	"create_webhook":          scope.WebhooksWrite,
	"update_webhook":          scope.WebhooksWrite,
	"delete_webhook":          scope.WebhooksWrite,
	"rotate_webhook_secret":   scope.WebhooksWrite,
	"test_webhook":            scope.WebhooksWrite,
	"list_webhook_deliveries": scope.WebhooksRead,
	"list_domains":            scope.DomainsRead,
	"list_audit_events":       scope.AuditRead,
	"list_members":            scope.MembersRead,
	"update_member_role":      scope.MembersWrite,
	"remove_member":           scope.MembersWrite,
	"list_invitations":        scope.MembersWrite,
	"create_invitation":       scope.MembersWrite,
	"revoke_invitation":       scope.MembersWrite,
}

// ToolScope returns the scope a tool needs ("" for any credential) and
// whether the tool is known, for tests and documentation.
func ToolScope(name string) (scope.Scope, bool) {
	s, ok := toolScopes[name]
	return s, ok
}

// servers holds one MCP server per set of scopes, built on first use: the
// tools a credential with exactly those scopes may call.
type servers struct {
	build func() *sdk.Server // every tool
	all   []string           // the names of every tool
	mu    sync.Mutex
	byKey map[string]*sdk.Server
}

func newServers(build func() *sdk.Server) *servers {
	var all []string
	for name := range toolScopes {
		all = append(all, name)
	}
	return &servers{build: build, all: all, byKey: map[string]*sdk.Server{}}
}

// forScopes returns the server whose tools need only scopes in have.
func (s *servers) forScopes(have []scope.Scope) *sdk.Server {
	names := make([]string, len(have))
	for i, h := range have {
		names[i] = string(h)
	}
	slices.Sort(names)
	key := strings.Join(slices.Compact(names), " ")
	s.mu.Lock()
	defer s.mu.Unlock()
	if srv, ok := s.byKey[key]; ok {
		return srv
	}
	srv := s.build()
	var hidden []string
	for _, name := range s.all {
		if need := toolScopes[name]; need != anyCredential && !slices.Contains(have, need) {
			hidden = append(hidden, name)
		}
	}
	srv.RemoveTools(hidden...)
	s.byKey[key] = srv
	return srv
}
