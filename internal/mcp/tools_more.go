package mcp

import (
	"context"
	"net/http"
	"net/url"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type analyticsIn struct {
	ID       string  `json:"id"`
	From     *string `json:"from,omitempty"`
	To       *string `json:"to,omitempty"`
	Interval *string `json:"interval,omitempty"`
	Timezone *string `json:"timezone,omitempty"`
}

type scansIn struct {
	ID string `json:"id"`
	pageIn
}

type createWebhookIn struct {
	URL            string   `json:"url"`
	Events         []string `json:"events"`
	Description    *string  `json:"description,omitempty"`
	IdempotencyKey string   `json:"idempotency_key,omitempty"`
}

type deliveriesIn struct {
	WebhookID string `json:"webhook_id"`
	pageIn
}

func addAnalyticsTools(s *sdk.Server, d *dispatcher) {
	sdk.AddTool(s, &sdk.Tool{
		Name:        "get_workspace",
		Description: "The workspace this credential acts in (id, name), the IANA time zone its analytics are cut in by default (timezone) and the scopes it holds; any valid credential may call it. Use it to see which tools will work.",
		Annotations: readOnly("Get Workspace"),
		InputSchema: object(nil, map[string]*jsonschema.Schema{}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodGet, path: "/workspace"})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "get_link_analytics",
		Description: "Scan analytics of one link (scope analytics:read): total human scans, unique visitors (counted once per UTC day), " +
			"bot scans, a zero-filled time series of {start, scans, unique} per bucket, and breakdowns by device, os, browser, " +
			"referrer host, country (ISO 3166-1 alpha-2, \"(unknown)\" when not known; every country listed) and source " +
			"(\"qr\": scanned from a QR code, \"link\": the short URL opened otherwise) ([{key, scans}], largest first; countries and sources each add up to total). Range defaults to the last 30 days by day. Buckets start at local midnights and hours of timezone " +
			"(default: the workspace's, see get_workspace; daylight-saving days have 23 or 25 hours), weeks on Monday; every timestamp in the answer is UTC, and the answer echoes timezone.",
		Annotations: readOnly("Get Link Analytics"),
		InputSchema: object([]string{"id"}, map[string]*jsonschema.Schema{
			"id":       linkID(),
			"from":     dateTime("Start of the range, inclusive, RFC 3339 (e.g. 2026-11-01T00:00:00Z). Default: 30 days before to."),
			"to":       dateTime("End of the range, exclusive, RFC 3339. Default: now."),
			"interval": enum("Bucket size of the series. The range may hold at most a bounded number of buckets (hour: 31 days). Default: day.", "hour", "day", "week", "month"),
			"timezone": strLen("IANA time zone name the buckets are cut in, e.g. America/New_York, Asia/Kolkata or UTC. Default: the workspace's time zone.", 1, 64),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in analyticsIn) (*sdk.CallToolResult, any, error) {
		q := url.Values{}
		for k, v := range map[string]*string{"from": in.From, "to": in.To, "interval": in.Interval, "timezone": in.Timezone} {
			if v != nil {
				q.Set(k, *v)
			}
		}
		return d.run(ctx, call{method: http.MethodGet, path: linkPath(in.ID, "/analytics"), query: q})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "list_link_scans",
		Description: "Recent scans of one link, newest first (scope analytics:read): each {id, occurred_at, referrer_host, device, os, browser, bot}. " +
			"Raw IP addresses are never stored. Paged like list_links.",
		Annotations: readOnly("List Recent Scans"),
		InputSchema: object([]string{"id"}, map[string]*jsonschema.Schema{"id": linkID(), "limit": pageLimit(), "cursor": pageCursor()}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in scansIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodGet, path: linkPath(in.ID, "/scans"), query: in.query()})
	})
}

func addWebhookTools(s *sdk.Server, d *dispatcher) {
	sdk.AddTool(s, &sdk.Tool{
		Name:        "list_webhooks",
		Description: "List the workspace's webhook subscriptions, newest first (scope webhooks:read): url, events, status (enabled|disabled), description. Secrets are never listed. Paged like list_links.",
		Annotations: readOnly("List Webhooks"),
		InputSchema: object(nil, map[string]*jsonschema.Schema{"limit": pageLimit(), "cursor": pageCursor()}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in pageIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodGet, path: "/webhooks", query: in.query()})
	})

	events := &jsonschema.Schema{
		Type: "array", Description: "Event types to deliver, at least one, no duplicates.", MinItems: ptr(1), UniqueItems: true,
		Items: enum("An event type.", "link.created", "link.updated", "link.deleted", "scan.created"),
	}
	sdk.AddTool(s, &sdk.Tool{
		Name: "create_webhook",
		Description: "Subscribe a URL to events (scope webhooks:write). linkqr POSTs each event as signed JSON " +
			"(Service-Signature: t=<unix>,v1=<HMAC-SHA256 hex of \"<t>.<body>\">). The response holds the signing secret " +
			"(whsec_…) — shown only this once; tell the user to store it.",
		Annotations: mutating("Create Webhook", false, false),
		InputSchema: object([]string{"url", "events"}, map[string]*jsonschema.Schema{
			"url":             uri("The receiver: an absolute https URL on a public address, no user:password@, at most 2048 bytes.", 2048),
			"events":          events,
			"description":     strLen("Optional note, e.g. what the receiver is.", 0, 500),
			"idempotency_key": idempotencyKey(),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in createWebhookIn) (*sdk.CallToolResult, any, error) {
		body := map[string]any{"url": in.URL, "events": in.Events}
		if in.Description != nil {
			body["description"] = *in.Description
		}
		return d.run(ctx, call{method: http.MethodPost, path: "/webhooks", body: body, idempotencyKey: in.IdempotencyKey})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "list_webhook_deliveries",
		Description: "Delivery attempts of one webhook, newest first (scope webhooks:read): event_type, attempt, status " +
			"(pending|succeeded|failed), response_status, error, duration_ms, next_attempt_at. Paged like list_links.",
		Annotations: readOnly("List Webhook Deliveries"),
		InputSchema: object([]string{"webhook_id"}, map[string]*jsonschema.Schema{
			"webhook_id": pattern(`The webhook's id, "whk_" followed by 26 characters.`, `^whk_[0-9a-z]{26}$`),
			"limit":      pageLimit(), "cursor": pageCursor(),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in deliveriesIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodGet, path: "/webhooks/" + url.PathEscape(in.WebhookID) + "/deliveries", query: in.query()})
	})
}
