package mcp

import (
	"context"
	"net/http"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func addDomainTools(s *sdk.Server, d *dispatcher) {
	sdk.AddTool(s, &sdk.Tool{
		Name: "list_domains",
		Description: "List the workspace's custom short domains, newest first (scope domains:read): hostname, status " +
			"(pending|verified), the DNS TXT record that verifies it (verification.name and .value), the records that " +
			"point it at the service (routing.records: a CNAME, an apex's ALIAS, or A/AAAA), live checks (checks.verification, " +
			".routing, .certificate: state ok|pending|failed|not_applicable and a detail sentence saying what DNS holds), " +
			"root_url and not_found_url. Paged like list_links.",
		Annotations: readOnly("List Domains"),
		InputSchema: object(nil, map[string]*jsonschema.Schema{"limit": pageLimit(), "cursor": pageCursor()}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in pageIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodGet, path: "/domains", query: in.query()})
	})
}
