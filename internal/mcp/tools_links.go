package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type createLinkIn struct {
	TargetURL      string   `json:"target_url"`
	Title          *string  `json:"title,omitempty"`
	Code           *string  `json:"code,omitempty"`
	ExpiresAt      *string  `json:"expires_at,omitempty"`
	Domain         *string  `json:"domain,omitempty"`
	Tags           []string `json:"tags,omitempty"`
	IdempotencyKey string   `json:"idempotency_key,omitempty"`
	utmIn
}

// utmIn are the five UTM parameters as tool arguments
// (docs/api.md#utm-parameters).
type utmIn struct {
	UTMSource   *string `json:"utm_source,omitempty"`
	UTMMedium   *string `json:"utm_medium,omitempty"`
	UTMCampaign *string `json:"utm_campaign,omitempty"`
	UTMTerm     *string `json:"utm_term,omitempty"`
	UTMContent  *string `json:"utm_content,omitempty"`
}

// addTo puts the parameters given into an API body, "" as null (which
// the API reads as absent on create and as removal on PATCH).
func (in utmIn) addTo(body map[string]any) {
	for name, v := range map[string]*string{
		"utm_source": in.UTMSource, "utm_medium": in.UTMMedium, "utm_campaign": in.UTMCampaign,
		"utm_term": in.UTMTerm, "utm_content": in.UTMContent,
	} {
		if v != nil {
			body[name] = emptyAsNull(*v)
		}
	}
}

// utmSchemas adds the five parameters to a tool's properties; verb says
// what "" does ("leaves it out", "removes it").
func utmSchemas(props map[string]*jsonschema.Schema, verb string) map[string]*jsonschema.Schema {
	for _, p := range []struct{ name, what, example string }{
		{"utm_source", "where the traffic comes from", "newsletter"},
		{"utm_medium", "the marketing medium", "email"},
		{"utm_campaign", "the campaign", "spring-sale"},
		{"utm_term", "the paid search term", "running shoes"},
		{"utm_content", "what was clicked, to tell variants apart", "header-banner"},
	} {
		props[p.name] = strLen("Optional UTM parameter "+p.name+" ("+p.what+", e.g. \""+p.example+"\"), at most 200 characters; "+
			"merged into the target's query at the redirect, replacing a parameter of that name; target_url itself stays as given. \"\" "+verb+".", 0, 200)
	}
	return props
}

// body is the create body of the API.
func (in createLinkIn) body() map[string]any {
	body := map[string]any{"target_url": in.TargetURL}
	if in.Title != nil {
		body["title"] = *in.Title
	}
	if in.Code != nil {
		body["code"] = *in.Code
	}
	if in.ExpiresAt != nil {
		body["expires_at"] = *in.ExpiresAt
	}
	if in.Domain != nil {
		body["domain"] = *in.Domain
	}
	if in.Tags != nil {
		body["tags"] = in.Tags
	}
	in.addTo(body)
	return body
}

type createLinksIn struct {
	Links          []createLinkIn `json:"links"`
	Atomic         bool           `json:"atomic,omitempty"`
	IdempotencyKey string         `json:"idempotency_key,omitempty"`
}

type editLinksIn struct {
	IDs            []string `json:"ids"`
	AddTags        []string `json:"add_tags,omitempty"`
	RemoveTags     []string `json:"remove_tags,omitempty"`
	Status         string   `json:"status,omitempty"`
	ExpiresAt      *string  `json:"expires_at,omitempty"`
	Atomic         bool     `json:"atomic,omitempty"`
	IdempotencyKey string   `json:"idempotency_key,omitempty"`
}

// body is PATCH /links/bulk's body: only the arguments given.
func (in editLinksIn) body() map[string]any {
	body := map[string]any{"ids": in.IDs, "atomic": in.Atomic}
	if in.AddTags != nil {
		body["add_tags"] = in.AddTags
	}
	if in.RemoveTags != nil {
		body["remove_tags"] = in.RemoveTags
	}
	if in.Status != "" {
		body["status"] = in.Status
	}
	if in.ExpiresAt != nil {
		body["expires_at"] = emptyAsNull(*in.ExpiresAt)
	}
	return body
}

type deleteLinksIn struct {
	IDs            []string `json:"ids"`
	Atomic         bool     `json:"atomic,omitempty"`
	IdempotencyKey string   `json:"idempotency_key,omitempty"`
}

// bulkIDsSchema is the ids argument of the bulk tools.
func bulkIDsSchema(what string) *jsonschema.Schema {
	return &jsonschema.Schema{
		Type: "array", MinItems: ptr(1), MaxItems: ptr(1000),
		Description: what + ": 1 to 1,000 link ids (lnk_…, from list_links or search_links).",
		Items:       &jsonschema.Schema{Type: "string"},
	}
}

type updateLinkIn struct {
	ID        string    `json:"id"`
	TargetURL *string   `json:"target_url,omitempty"`
	Title     *string   `json:"title,omitempty"`
	ExpiresAt *string   `json:"expires_at,omitempty"`
	Tags      *[]string `json:"tags,omitempty"`
	utmIn
}

type linkIDIn struct {
	ID string `json:"id"`
}

type repointIn struct {
	ID        string `json:"id"`
	TargetURL string `json:"target_url"`
}

type pageIn struct {
	Limit  *int   `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

func (p pageIn) query() url.Values {
	q := url.Values{}
	if p.Limit != nil {
		q.Set("limit", strconv.Itoa(*p.Limit))
	}
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	return q
}

type searchIn struct {
	Query  string   `json:"query,omitempty"`
	Tags   []string `json:"tags,omitempty"`
	Status string   `json:"status,omitempty"`
	Limit  *int     `json:"limit,omitempty"`
	Cursor string   `json:"cursor,omitempty"`
}

type qrIn struct {
	ID     string  `json:"id"`
	Format *string `json:"format,omitempty"`
	Size   *int    `json:"size,omitempty"`
	Margin *int    `json:"margin,omitempty"`
	ECC    *string `json:"ecc,omitempty"`
	FG     *string `json:"fg,omitempty"`
	BG     *string `json:"bg,omitempty"`
	Logo   *bool   `json:"logo,omitempty"`
}

func linkPath(id string, rest ...string) string {
	return "/links/" + url.PathEscape(id) + strings.Join(rest, "")
}

// readOnly and mutating annotate tools for clients that ask before acting.
func readOnly(title string) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: true, OpenWorldHint: ptr(false)}
}

func mutating(title string, destructive, idempotent bool) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: ptr(false)}
}

func ptr[T any](v T) *T { return &v }

func addLinkTools(s *sdk.Server, d *dispatcher) {
	sdk.AddTool(s, &sdk.Tool{
		Name: "create_link",
		Description: "Create a short link (scope links:write). Returns the link object: id (lnk_…), code, short_url (what to share " +
			"or print as a QR code), target_url, status, domain. Without a code, a random 7-character code is generated. " +
			"With domain (a verified custom domain of the workspace, see list_domains) the short URL is on that domain. Emits link.created.",
		Annotations: mutating("Create Link", false, false),
		InputSchema: withIdempotencyKey(linkFields([]string{"target_url"})),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in createLinkIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodPost, path: "/links", body: in.body(), idempotencyKey: in.IdempotencyKey})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "create_links",
		Description: "Create 1 to 1,000 short links in one call (scope links:write; POST /links/bulk). Each item takes the arguments of " +
			"create_link. Returns {object:\"bulk_result\", created, failed, data:[{index, status:201, link} | {index, status:409|422, error}]}: " +
			"with atomic false (default) each item succeeds or fails on its own; with atomic true all are created or none " +
			"(then a validation error lists /links/<index>/<field>). Emits link.created per created link. Costs 1 request of the rate limit plus 1 per 10 links.",
		Annotations: mutating("Create Links", false, false),
		InputSchema: object([]string{"links"}, map[string]*jsonschema.Schema{
			"links": {
				Type: "array", Description: "The links to create, 1 to 1,000, each like create_link's arguments (without idempotency_key).",
				MinItems: ptr(1), MaxItems: ptr(1000), Items: linkFields([]string{"target_url"}),
			},
			"atomic":          {Type: "boolean", Description: "true: create all or nothing. Default: false (each item on its own)."},
			"idempotency_key": idempotencyKey(),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in createLinksIn) (*sdk.CallToolResult, any, error) {
		items := make([]map[string]any, len(in.Links))
		for i, l := range in.Links {
			items[i] = l.body()
		}
		body := map[string]any{"links": items, "atomic": in.Atomic}
		return d.run(ctx, call{method: http.MethodPost, path: "/links/bulk", body: body, idempotencyKey: in.IdempotencyKey})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "update_link",
		Description: "Change a link's target_url, title, expiry, tags or UTM parameters (scope links:write); only the arguments given change. " +
			"tags replaces the whole set ([] removes them all); an empty title removes the title, an empty utm_* removes that parameter. " +
			"Returns the updated link; emits link.updated with the previous values of what changed.",
		Annotations: mutating("Update Link", false, true),
		InputSchema: object([]string{"id"}, utmSchemas(map[string]*jsonschema.Schema{
			"id":         linkID(),
			"target_url": uri("The new destination: an absolute http or https URL with a host, no user:password@, at most 2048 bytes.", 2048),
			"title":      strLen("The new title, at most 200 characters; \"\" removes it.", 0, 200),
			"expires_at": strLen("The new expiry, an RFC 3339 instant in the future (e.g. 2027-01-31T23:59:59Z); \"\" removes it.", 0, 64),
			"tags":       tagsSchema(),
		}, "removes it")),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in updateLinkIn) (*sdk.CallToolResult, any, error) {
		body := map[string]any{}
		if in.TargetURL != nil {
			body["target_url"] = *in.TargetURL
		}
		if in.Title != nil {
			body["title"] = emptyAsNull(*in.Title)
		}
		if in.ExpiresAt != nil {
			body["expires_at"] = emptyAsNull(*in.ExpiresAt)
		}
		if in.Tags != nil {
			body["tags"] = *in.Tags
		}
		in.addTo(body)
		return d.run(ctx, call{method: http.MethodPatch, path: linkPath(in.ID), body: body})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name:        "get_link",
		Description: "Get one link by id (scope links:read): its target_url, short_url, status (active|paused), expires_at, scan_count (human scans) and last_scanned_at.",
		Annotations: readOnly("Get Link"),
		InputSchema: object([]string{"id"}, map[string]*jsonschema.Schema{"id": linkID()}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in linkIDIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodGet, path: linkPath(in.ID)})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "list_links",
		Description: "List the workspace's links, newest first (scope links:read). Returns {object:\"list\", data:[link…], has_more, next_cursor}; " +
			"call again with cursor=next_cursor while has_more is true. To find links by words, use search_links.",
		Annotations: readOnly("List Links"),
		InputSchema: object(nil, map[string]*jsonschema.Schema{"limit": pageLimit(), "cursor": pageCursor()}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in pageIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodGet, path: "/links", query: in.query()})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "search_links",
		Description: "Find the workspace's links whose code, title or target_url contain every word of the query (in any order), case-insensitively, " +
			"and/or that carry every one of the given tags, newest first (scope links:read; GET /links?q=…&tag=…). " +
			"Returns {object:\"list\", data:[link…], has_more, next_cursor}; " +
			"call again with the same query and cursor=next_cursor while has_more is true.",
		Annotations: readOnly("Search Links"),
		InputSchema: object(nil, map[string]*jsonschema.Schema{
			"query":  strLen("Words to look for in code, title and target_url, e.g. \"menu\" or \"spring example.com\"; every word must match.", 1, 200),
			"tags":   tagsSchema(),
			"status": enum("Only links that are active (redirecting now), paused or expired; all (default) for every link.", "all", "active", "paused", "expired"),
			"limit":  integer("Matches per answer (1-100). Default: 20.", 1, 100),
			"cursor": pageCursor(),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in searchIn) (*sdk.CallToolResult, any, error) {
		if in.Query == "" && len(in.Tags) == 0 {
			return failure(errors.New("give a query, tags, or both; to list every link, use list_links")), nil, nil
		}
		return d.search(ctx, in)
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "repoint_link",
		Description: "Re-point a link: change where its short_url (and every printed QR code of it) redirects, effective on the next scan " +
			"(scope links:write). Returns the updated link; emits link.updated with the previous target_url.",
		Annotations: mutating("Re-point Link", false, true),
		InputSchema: object([]string{"id", "target_url"}, map[string]*jsonschema.Schema{
			"id":         linkID(),
			"target_url": uri("The new destination: an absolute http or https URL with a host, no user:password@, at most 2048 bytes.", 2048),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in repointIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodPatch, path: linkPath(in.ID), body: map[string]any{"target_url": in.TargetURL}})
	})

	for _, st := range []struct{ name, status, title, desc string }{
		{"pause_link", "paused", "Pause Link", "Pause a link (scope links:write): its short_url answers 410 Gone and scans are not counted until it is resumed. Returns the updated link."},
		{"resume_link", "active", "Resume Link", "Resume a paused link (scope links:write): its short_url redirects again. Returns the updated link."},
	} {
		status := st.status
		sdk.AddTool(s, &sdk.Tool{
			Name: st.name, Description: st.desc,
			Annotations: mutating(st.title, false, true),
			InputSchema: object([]string{"id"}, map[string]*jsonschema.Schema{"id": linkID()}),
		}, func(ctx context.Context, _ *sdk.CallToolRequest, in linkIDIn) (*sdk.CallToolResult, any, error) {
			return d.run(ctx, call{method: http.MethodPatch, path: linkPath(in.ID), body: map[string]any{"status": status}})
		})
	}

	sdk.AddTool(s, &sdk.Tool{
		Name: "delete_link",
		Description: "Delete a link for good (scope links:write): its short_url answers 410 Gone from then on and its code can never be used again. " +
			"To stop a link temporarily, use pause_link instead. Emits link.deleted.",
		Annotations: mutating("Delete Link", true, true),
		InputSchema: object([]string{"id"}, map[string]*jsonschema.Schema{"id": linkID()}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in linkIDIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodDelete, path: linkPath(in.ID)})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "edit_links",
		Description: "Apply one change to 1 to 1,000 links in one call (scope links:write; PATCH /links/bulk): add_tags and remove_tags " +
			"(added and removed on each link as it is, so edits at once never lose a tag), status active|paused, expires_at (\"\" removes it). " +
			"Returns {object:\"list\", data:[{index, id, status:200, link} | {index, id, status:404|422, error}]}: with atomic false (default) " +
			"each id on its own (404: not a link of this workspace; 422: a malformed id or more than 10 tags); with atomic true all or none. " +
			"Emits link.updated per changed link. Costs 1 request of the rate limit plus 1 per 10 ids.",
		Annotations: mutating("Edit Links", false, true),
		InputSchema: object([]string{"ids"}, map[string]*jsonschema.Schema{
			"ids":             bulkIDsSchema("The links to change"),
			"add_tags":        tagsSchema(),
			"remove_tags":     tagsSchema(),
			"status":          enum("paused stops redirecting (410 Gone); active resumes.", "active", "paused"),
			"expires_at":      dateTime("RFC 3339 instant in the future after which the links answer 410 Gone; \"\" removes the expiry."),
			"atomic":          {Type: "boolean", Description: "true: change all or none. Default: false (each id on its own)."},
			"idempotency_key": idempotencyKey(),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in editLinksIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodPatch, path: "/links/bulk", body: in.body(), idempotencyKey: in.IdempotencyKey})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "delete_links",
		Description: "Delete 1 to 1,000 links for good in one call (scope links:write; DELETE /links/bulk): as delete_link for each. " +
			"Returns {object:\"list\", data:[{index, id, status:200, link (as it was)} | {index, id, status:404|422, error}]}; with atomic true " +
			"all are deleted or none. Emits link.deleted per deleted link.",
		Annotations: mutating("Delete Links", true, true),
		InputSchema: object([]string{"ids"}, map[string]*jsonschema.Schema{
			"ids":             bulkIDsSchema("The links to delete"),
			"atomic":          {Type: "boolean", Description: "true: delete all or none. Default: false (each id on its own)."},
			"idempotency_key": idempotencyKey(),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in deleteLinksIn) (*sdk.CallToolResult, any, error) {
		q := url.Values{"ids": {strings.Join(in.IDs, ",")}}
		if in.Atomic {
			q.Set("atomic", "true")
		}
		return d.run(ctx, call{method: http.MethodDelete, path: "/links/bulk?" + q.Encode(), idempotencyKey: in.IdempotencyKey})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "get_link_qr",
		Description: "Get the QR code of a link's short_url (scope links:read): a PNG image by default, or SVG, or a one-page vector PDF for print (an embedded resource), in the link's " +
			"QR design (see get_qr_design); the options below override the design for this image, logo=false leaves its logo out. " +
			"It encodes short_url?qr=1, so scans of it are recorded with source qr (the target never sees the parameter). " +
			"Foreground and background need a contrast of at least 3:1, or the call fails with validation-failed.",
		Annotations: readOnly("Get QR Code"),
		InputSchema: object([]string{"id"}, map[string]*jsonschema.Schema{
			"id":     linkID(),
			"format": enum("File format: png or svg (image content), pdf (an embedded application/pdf resource). Default: png.", "png", "svg", "pdf"),
			"size":   integer("PNG width and height in pixels (64-4096); ignored for SVG. Default: 512.", 64, 4096),
			"margin": integer("Quiet zone around the code, in modules (0-16). Default: 4.", 0, 16),
			"ecc":    enum("Error correction level: L (7%), M (15%), Q (25%), H (30%). Default: M.", "L", "M", "Q", "H"),
			"fg":     pattern("Foreground colour as RRGGBB hex, no #. Default: 000000.", `^[0-9A-Fa-f]{6}$`),
			"bg":     pattern("Background colour as RRGGBB hex, no #. Default: FFFFFF.", `^[0-9A-Fa-f]{6}$`),
			"logo":   {Type: "boolean", Description: "false leaves the design's logo out. Default: true."},
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in qrIn) (*sdk.CallToolResult, any, error) {
		return d.qr(ctx, in)
	})
}

// qr fetches the image and returns it as image content.
func (d *dispatcher) qr(ctx context.Context, in qrIn) (*sdk.CallToolResult, any, error) {
	q := url.Values{}
	set := func(k string, v *string) {
		if v != nil {
			q.Set(k, *v)
		}
	}
	setInt := func(k string, v *int) {
		if v != nil {
			q.Set(k, strconv.Itoa(*v))
		}
	}
	set("format", in.Format)
	setInt("size", in.Size)
	setInt("margin", in.Margin)
	set("ecc", in.ECC)
	set("fg", in.FG)
	set("bg", in.BG)
	if in.Logo != nil {
		q.Set("logo", strconv.FormatBool(*in.Logo))
	}
	resp, err := d.do(ctx, call{method: http.MethodGet, path: linkPath(in.ID, "/qr"), query: q})
	if err != nil {
		return failure(err), nil, nil
	}
	if resp.status != http.StatusOK {
		return resp.problemResult(), nil, nil
	}
	mime := resp.header.Get("Content-Type")
	var file sdk.Content = &sdk.ImageContent{Data: resp.body, MIMEType: mime}
	if !strings.HasPrefix(mime, "image/") {
		// A PDF is no image content: clients get it as a file.
		file = &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "linkqr:///links/" + url.PathEscape(in.ID) + "/qr.pdf", MIMEType: mime, Blob: resp.body}}
	}
	return &sdk.CallToolResult{Content: []sdk.Content{
		file,
		&sdk.TextContent{Text: fmt.Sprintf("QR code of link %s (%s, %d bytes); it encodes the link's short_url with ?qr=1.", in.ID, mime, len(resp.body))},
	}}, nil, nil
}

// linkFields is the schema of create_link's link arguments.
func linkFields(required []string) *jsonschema.Schema {
	return object(required, utmSchemas(map[string]*jsonschema.Schema{
		"target_url": uri("Where the short link redirects: an absolute http or https URL with a host, no user:password@, at most 2048 bytes.", 2048),
		"title":      strLen("Optional human title, at most 200 characters.", 0, 200),
		"code":       pattern("Optional custom short code, 3-64 of A-Z a-z 0-9 _ -, case-sensitive; must be unused on its domain and, on the default domain, not a reserved path (api, docs, w, …). Taken → conflict error.", `^[A-Za-z0-9_-]{3,64}$`),
		"domain":     strLen("Optional hostname of a verified custom domain of the workspace (list_domains) to put the link on, e.g. go.acme.com; omitted: the default short domain.", 1, 1012),
		"expires_at": dateTime("Optional RFC 3339 instant in the future after which the short link answers 410 Gone, e.g. 2027-01-31T23:59:59Z."),
		"tags":       tagsSchema(),
	}, "leaves it out"))
}

// withIdempotencyKey adds the idempotency_key argument to an object schema.
func withIdempotencyKey(s *jsonschema.Schema) *jsonschema.Schema {
	s.Properties["idempotency_key"] = idempotencyKey()
	return s
}

// tagsSchema is a link's tags as a tool argument.
func tagsSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type: "array", MaxItems: ptr(10),
		Description: "Tags: at most 10, each 1-50 letters, digits, spaces, - _ or . (stored lowercase, so Print and print are one tag), e.g. [\"print\", \"spring-2027\"].",
		Items:       strLen("A tag.", 1, 50),
	}
}

// emptyAsNull is "" as JSON null: the tools' way to remove a value.
func emptyAsNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}
