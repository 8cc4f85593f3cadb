package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolOutputs names, for each JSON tool, the schema of the OpenAPI
// document (components.schemas) its success answers with: the tool's
// outputSchema is that very schema, so the API and its tools cannot
// describe one object two ways. Tools absent here (get_link_qr: an image)
// have no outputSchema.
var toolOutputs = map[string]string{
	"get_workspace":           "Workspace",
	"create_link":             "Link",
	"create_links":            "BulkResult",
	"get_link":                "Link",
	"list_links":              "LinkList",
	"search_links":            "LinkList",
	"repoint_link":            "Link",
	"update_link":             "Link",
	"set_link_destinations":   "Link",
	"pause_link":              "Link",
	"resume_link":             "Link",
	"delete_link":             doneSchema,
	"edit_links":              "BulkEditList",
	"delete_links":            "BulkEditList",
	"get_qr_design":           "QRDesign",
	"set_qr_design":           "QRDesign",
	"delete_link_qr_design":   doneSchema,
	"get_link_analytics":      "Analytics",
	"list_link_scans":         "ScanList",
	"list_webhooks":           "WebhookList",
	"create_webhook":          "WebhookWithSecret",
	"update_webhook":          "Webhook",
	"delete_webhook":          doneSchema,
	"rotate_webhook_secret":   "WebhookWithSecret",
	"test_webhook":            "Delivery",
	"list_webhook_deliveries": "DeliveryList",
	"list_domains":            "DomainList",
	"list_audit_events":       "AuditEventList",
	"list_members":            "MemberList",
	"update_member_role":      "Member",
	"remove_member":           doneSchema,
	"list_invitations":        "InvitationList",
	"create_invitation":       "InvitationWithAcceptUrl",
	"revoke_invitation":       doneSchema,
}

// doneSchema stands for the answer of a tool whose API call has no body
// (204): {"status":"done"}.
const doneSchema = "-done"

// outputSchemas turns toolOutputs into JSON Schemas from the OpenAPI
// document (JSON), each self-contained ($refs inlined) and widened to
// accept the tool error a call may end in instead (isError with the
// problem document as structured content), since clients validate
// structured content against outputSchema whether or not it is an error.
type outputSchemas struct {
	doc    []byte
	once   sync.Once
	byTool map[string]map[string]any
	err    error
}

func (o *outputSchemas) forTool(name string) (map[string]any, error) {
	o.once.Do(func() { o.byTool, o.err = buildOutputSchemas(o.doc) })
	if o.err != nil {
		return nil, o.err
	}
	return o.byTool[name], nil
}

func buildOutputSchemas(doc []byte) (map[string]map[string]any, error) {
	var d struct {
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("mcp: the OpenAPI document: %w", err)
	}
	out := map[string]map[string]any{}
	for tool, name := range toolOutputs {
		var success any
		if name == doneSchema {
			success = map[string]any{"type": "object", "required": []any{"status"},
				"properties": map[string]any{"status": map[string]any{"const": "done"}}}
		} else {
			s, ok := d.Components.Schemas[name]
			if !ok {
				return nil, fmt.Errorf("mcp: tool %s: no schema %s in the OpenAPI document", tool, name)
			}
			var err error
			if success, err = inline(s, d.Components.Schemas, 0); err != nil {
				return nil, fmt.Errorf("mcp: tool %s: %w", tool, err)
			}
		}
		schema := map[string]any{"type": "object", "anyOf": []any{success, toolErrorSchema()}}
		if m, _ := success.(map[string]any); m["description"] != nil {
			schema["description"] = m["description"]
		}
		out[tool] = schema
	}
	return out, nil
}

// inline returns a copy of v with every "#/components/schemas/…" $ref
// replaced by (a copy of) that schema.
func inline(v any, schemas map[string]any, depth int) (any, error) {
	if depth > 32 {
		return nil, fmt.Errorf("schemas nest deeper than 32 levels (a cycle?)")
	}
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			name, found := strings.CutPrefix(ref, "#/components/schemas/")
			target, exists := schemas[name]
			if !found || !exists {
				return nil, fmt.Errorf("unresolvable $ref %s", ref)
			}
			return inline(target, schemas, depth+1)
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := inline(e, schemas, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := inline(e, schemas, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	default:
		return v, nil
	}
}

// toolErrorSchema is the structured content of a tool error: the API's
// problem document (plus retry_after_seconds), or title and detail of a
// failure that did not come from the API.
func toolErrorSchema() map[string]any {
	str := map[string]any{"type": "string"}
	return map[string]any{
		"type": "object", "description": "A tool error (isError): the API's problem document.",
		"required": []any{"title", "detail"},
		"properties": map[string]any{
			"type": str, "title": str, "detail": str, "instance": str, "request_id": str, "required_scope": str,
			"status":              map[string]any{"type": "integer"},
			"retry_after_seconds": map[string]any{"type": "integer"},
			"errors":              map[string]any{"type": "array"},
		},
	}
}

// withOutputSchemas adds each tool's outputSchema to tools/list answers,
// so tool definitions stay as they are written and the schemas come from
// the document in one place.
func withOutputSchemas(o *outputSchemas) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			list, ok := res.(*sdk.ListToolsResult)
			if err != nil || !ok || method != "tools/list" {
				return res, err
			}
			out := *list
			out.Tools = make([]*sdk.Tool, len(list.Tools))
			for i, t := range list.Tools {
				c := *t
				schema, err := o.forTool(t.Name)
				if err != nil {
					return nil, err
				}
				if schema != nil {
					c.OutputSchema = schema
				}
				out.Tools[i] = &c
			}
			return &out, nil
		}
	}
}
