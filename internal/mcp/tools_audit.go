package mcp

import (
	"context"
	"net/http"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// auditIn is list_audit_events' arguments: a page and GET
// /audit-events' filters.
type auditIn struct {
	pageIn
	Action   string `json:"action,omitempty"`
	ActorID  string `json:"actor_id,omitempty"`
	TargetID string `json:"target_id,omitempty"`
	Since    string `json:"since,omitempty"`
	Until    string `json:"until,omitempty"`
}

func addAuditTools(s *sdk.Server, d *dispatcher) {
	sdk.AddTool(s, &sdk.Tool{
		Name: "list_audit_events",
		Description: "List the workspace's audit log, newest first (scope audit:read): who (actor: user, api_key, " +
			"oauth_client, operator or system) changed keys, OAuth clients and grants, webhooks, domains, members or the " +
			"workspace's settings, the target and the changed fields as [old, new]. Filters: action (exact, e.g. " +
			"webhook.created, or a prefix ending in '.', e.g. webhook.), actor_id, target_id, since and until (RFC 3339). " +
			"Paged like list_links.",
		Annotations: readOnly("List Audit Events"),
		InputSchema: object(nil, map[string]*jsonschema.Schema{
			"limit": pageLimit(), "cursor": pageCursor(),
			"action":    str("An action (webhook.created) or a prefix ending in '.' (webhook.)."),
			"actor_id":  str("Only entries made by this user (usr_…), API key (key_…) or OAuth client (cli_…)."),
			"target_id": str("Only entries about this object (whk_…, dom_…, key_…, usr_…, …)."),
			"since":     str("Only entries created at or after this RFC 3339 time."),
			"until":     str("Only entries created before this RFC 3339 time."),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in auditIn) (*sdk.CallToolResult, any, error) {
		q := in.query()
		for k, v := range map[string]string{"action": in.Action, "actor_id": in.ActorID, "target_id": in.TargetID, "since": in.Since, "until": in.Until} {
			if v != "" {
				q.Set(k, v)
			}
		}
		return d.run(ctx, call{method: http.MethodGet, path: "/audit-events", query: q})
	})
}
