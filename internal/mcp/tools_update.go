package mcp

import (
	"context"
	"net/http"
	"net/url"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// optional is a JSON member that may be absent, null or a value: the
// difference between "leave it", "clear it" and "set it" of a PATCH.
type optional[T any] struct {
	set   bool
	value *T
}

func (o *optional[T]) UnmarshalJSON(b []byte) error {
	o.set = true
	if string(b) == "null" {
		o.value = nil
		return nil
	}
	o.value = new(T)
	return jsonUnmarshal(b, o.value)
}

// put adds the member to a PATCH body when it was given (null included).
func (o optional[T]) put(body map[string]any, name string) {
	if !o.set {
		return
	}
	if o.value == nil {
		body[name] = nil
		return
	}
	body[name] = *o.value
}

type webhookIDIn struct {
	WebhookID      string `json:"webhook_id"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

type updateWebhookIn struct {
	WebhookID   string             `json:"webhook_id"`
	URL         optional[string]   `json:"url"`
	Events      optional[[]string] `json:"events"`
	Description optional[string]   `json:"description"`
	Status      optional[string]   `json:"status"`
}

func webhookPath(id string, rest string) string { return "/webhooks/" + url.PathEscape(id) + rest }

func webhookID() *jsonschema.Schema {
	return pattern(`The webhook's id, "whk_" followed by 26 characters, as returned by create_webhook or list_webhooks.`, `^whk_[0-9a-z]{26}$`)
}

func addUpdateTools(s *sdk.Server, d *dispatcher) {
	events := &jsonschema.Schema{
		Type: "array", Description: "Event types to deliver, at least one, no duplicates.", MinItems: ptr(1), UniqueItems: true,
		Items: enum("An event type.", "link.created", "link.updated", "link.deleted", "scan.created"),
	}
	sdk.AddTool(s, &sdk.Tool{
		Name: "update_webhook",
		Description: "Change a webhook subscription (scope webhooks:write): its url, events, description (null clears it) or " +
			"status (disabled stops deliveries; enabled re-enables one, also after an automatic disable). Only the fields given change.",
		Annotations: mutating("Update Webhook", false, true),
		InputSchema: object([]string{"webhook_id"}, map[string]*jsonschema.Schema{
			"webhook_id":  webhookID(),
			"url":         uri("New receiver URL: absolute https on a public address, at most 2048 bytes.", 2048),
			"events":      events,
			"description": nullable(strLen("New note; null removes it.", 0, 500)),
			"status":      enum("enabled or disabled.", "enabled", "disabled"),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in updateWebhookIn) (*sdk.CallToolResult, any, error) {
		body := map[string]any{}
		in.URL.put(body, "url")
		in.Events.put(body, "events")
		in.Description.put(body, "description")
		in.Status.put(body, "status")
		return d.run(ctx, call{method: http.MethodPatch, path: webhookPath(in.WebhookID, ""), body: body})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name:        "delete_webhook",
		Description: "Delete a webhook subscription for good (scope webhooks:write): nothing more is delivered to it. To stop it for a while, use update_webhook with status disabled.",
		Annotations: mutating("Delete Webhook", true, true),
		InputSchema: object([]string{"webhook_id"}, map[string]*jsonschema.Schema{"webhook_id": webhookID()}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in webhookIDIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodDelete, path: webhookPath(in.WebhookID, "")})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "rotate_webhook_secret",
		Description: "Give a webhook a new signing secret (scope webhooks:write). The response holds the new secret (whsec_…), " +
			"shown only this once: tell the user to store it. For 24 hours deliveries carry signatures with both the new and the old secret.",
		Annotations: mutating("Rotate Webhook Secret", false, false),
		InputSchema: object([]string{"webhook_id"}, map[string]*jsonschema.Schema{"webhook_id": webhookID(), "idempotency_key": idempotencyKey()}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in webhookIDIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodPost, path: webhookPath(in.WebhookID, "/rotate-secret"), idempotencyKey: in.IdempotencyKey})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "test_webhook",
		Description: "Send a signed test event (type ping) to one webhook now, through the normal delivery path (scope webhooks:write). " +
			"Returns the pending delivery; list_webhook_deliveries shows whether the receiver answered 2xx.",
		Annotations: mutating("Send Test Event", false, false),
		InputSchema: object([]string{"webhook_id"}, map[string]*jsonschema.Schema{"webhook_id": webhookID(), "idempotency_key": idempotencyKey()}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in webhookIDIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodPost, path: webhookPath(in.WebhookID, "/test"), idempotencyKey: in.IdempotencyKey})
	})
}
