package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type createLinkIn struct {
	TargetURL      string  `json:"target_url"`
	Title          *string `json:"title,omitempty"`
	Code           *string `json:"code,omitempty"`
	ExpiresAt      *string `json:"expires_at,omitempty"`
	IdempotencyKey string  `json:"idempotency_key,omitempty"`
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
	Query      string `json:"query"`
	MaxResults *int   `json:"max_results,omitempty"`
}

type qrIn struct {
	ID     string  `json:"id"`
	Format *string `json:"format,omitempty"`
	Size   *int    `json:"size,omitempty"`
	Margin *int    `json:"margin,omitempty"`
	ECC    *string `json:"ecc,omitempty"`
	FG     *string `json:"fg,omitempty"`
	BG     *string `json:"bg,omitempty"`
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
			"or print as a QR code), target_url, status. Without a code, a random 7-character code is generated. Emits link.created.",
		Annotations: mutating("Create link", false, false),
		InputSchema: object([]string{"target_url"}, map[string]*jsonschema.Schema{
			"target_url":      strLen("Where the short link redirects: an absolute http or https URL with a host, no user:password@, at most 2048 bytes.", 1, 2048),
			"title":           strLen("Optional human title, at most 200 characters.", 0, 200),
			"code":            pattern("Optional custom short code, 3-64 of A-Z a-z 0-9 _ -, case-sensitive; must be unused and not a reserved path (api, docs, w, …). Taken → conflict error.", `^[A-Za-z0-9_-]{3,64}$`),
			"expires_at":      dateTime("Optional RFC 3339 instant in the future after which the short link answers 410 Gone, e.g. 2027-01-31T23:59:59Z."),
			"idempotency_key": idempotencyKey(),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in createLinkIn) (*sdk.CallToolResult, any, error) {
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
		return d.run(ctx, call{method: http.MethodPost, path: "/links", body: body, idempotencyKey: in.IdempotencyKey})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name:        "get_link",
		Description: "Get one link by id (scope links:read): its target_url, short_url, status (active|paused), expires_at, scan_count (human scans) and last_scanned_at.",
		Annotations: readOnly("Get link"),
		InputSchema: object([]string{"id"}, map[string]*jsonschema.Schema{"id": linkID()}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in linkIDIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodGet, path: linkPath(in.ID)})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "list_links",
		Description: "List the workspace's links, newest first (scope links:read). Returns {object:\"list\", data:[link…], has_more, next_cursor}; " +
			"call again with cursor=next_cursor while has_more is true. To find links by words, use search_links.",
		Annotations: readOnly("List links"),
		InputSchema: object(nil, map[string]*jsonschema.Schema{"limit": pageLimit(), "cursor": pageCursor()}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in pageIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodGet, path: "/links", query: in.query()})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "search_links",
		Description: fmt.Sprintf("Find links whose code, title or target_url contains the query, case-insensitively (scope links:read). "+
			"Looks through the %d newest links (each page of 100 counts as one API request against the credential's rate limit) "+
			"and returns {data:[link…], scanned, complete}; complete=false means older links were not searched.", searchWindow),
		Annotations: readOnly("Search links"),
		InputSchema: object([]string{"query"}, map[string]*jsonschema.Schema{
			"query":       strLen("Text to look for in code, title and target_url, e.g. \"menu\" or \"example.com/spring\".", 1, 200),
			"max_results": integer("Stop after this many matches (1-100). Default: 20.", 1, 100),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in searchIn) (*sdk.CallToolResult, any, error) {
		return d.search(ctx, in)
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "repoint_link",
		Description: "Re-point a link: change where its short_url (and every printed QR code of it) redirects, effective on the next scan " +
			"(scope links:write). Returns the updated link; emits link.updated with the previous target_url.",
		Annotations: mutating("Re-point link", false, true),
		InputSchema: object([]string{"id", "target_url"}, map[string]*jsonschema.Schema{
			"id":         linkID(),
			"target_url": strLen("The new destination: an absolute http or https URL with a host, no user:password@, at most 2048 bytes.", 1, 2048),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in repointIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodPatch, path: linkPath(in.ID), body: map[string]any{"target_url": in.TargetURL}})
	})

	for _, st := range []struct{ name, status, desc string }{
		{"pause_link", "paused", "Pause a link (scope links:write): its short_url answers 410 Gone and scans are not counted until it is resumed. Returns the updated link."},
		{"resume_link", "active", "Resume a paused link (scope links:write): its short_url redirects again. Returns the updated link."},
	} {
		status := st.status
		sdk.AddTool(s, &sdk.Tool{
			Name: st.name, Description: st.desc,
			Annotations: mutating(strings.ReplaceAll(st.name, "_", " "), false, true),
			InputSchema: object([]string{"id"}, map[string]*jsonschema.Schema{"id": linkID()}),
		}, func(ctx context.Context, _ *sdk.CallToolRequest, in linkIDIn) (*sdk.CallToolResult, any, error) {
			return d.run(ctx, call{method: http.MethodPatch, path: linkPath(in.ID), body: map[string]any{"status": status}})
		})
	}

	sdk.AddTool(s, &sdk.Tool{
		Name: "delete_link",
		Description: "Delete a link for good (scope links:write): its short_url answers 410 Gone from then on and its code can never be used again. " +
			"To stop a link temporarily, use pause_link instead. Emits link.deleted.",
		Annotations: mutating("Delete link", true, true),
		InputSchema: object([]string{"id"}, map[string]*jsonschema.Schema{"id": linkID()}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in linkIDIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodDelete, path: linkPath(in.ID)})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "get_link_qr",
		Description: "Get the QR code of a link's short_url as an image (scope links:read): PNG by default, or SVG. " +
			"Foreground and background need a contrast of at least 3:1, or the call fails with validation-failed.",
		Annotations: readOnly("Get QR code"),
		InputSchema: object([]string{"id"}, map[string]*jsonschema.Schema{
			"id":     linkID(),
			"format": enum("Image format. Default: png.", "png", "svg"),
			"size":   integer("PNG width and height in pixels (64-4096); ignored for SVG. Default: 512.", 64, 4096),
			"margin": integer("Quiet zone around the code, in modules (0-16). Default: 4.", 0, 16),
			"ecc":    enum("Error correction level: L (7%), M (15%), Q (25%), H (30%). Default: M.", "L", "M", "Q", "H"),
			"fg":     pattern("Foreground colour as RRGGBB hex, no #. Default: 000000.", `^[0-9A-Fa-f]{6}$`),
			"bg":     pattern("Background colour as RRGGBB hex, no #. Default: FFFFFF.", `^[0-9A-Fa-f]{6}$`),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in qrIn) (*sdk.CallToolResult, any, error) {
		return d.qr(ctx, in)
	})
}

// searchWindow is how many of the newest links search_links looks through.
const searchWindow = 1000

// search pages through the workspace's links (newest first, 100 a page,
// each page an ordinary API request) and keeps those whose code, title or
// target_url contains the query. The API has no search parameter yet; when
// it gets one, this becomes a single call.
func (d *dispatcher) search(ctx context.Context, in searchIn) (*sdk.CallToolResult, any, error) {
	want := 20
	if in.MaxResults != nil {
		want = *in.MaxResults
	}
	needle := strings.ToLower(in.Query)
	matches := []json.RawMessage{}
	scanned, cursor, complete := 0, "", false
	for scanned < searchWindow && len(matches) < want {
		q := url.Values{"limit": {"100"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		resp, err := d.do(ctx, call{method: http.MethodGet, path: "/links", query: q})
		if err != nil {
			return failure(err), nil, nil
		}
		if resp.status != http.StatusOK {
			return resp.problemResult(), nil, nil
		}
		var page struct {
			Data       []json.RawMessage `json:"data"`
			HasMore    bool              `json:"has_more"`
			NextCursor *string           `json:"next_cursor"`
		}
		if err := json.Unmarshal(resp.body, &page); err != nil {
			return failure(fmt.Errorf("decode link list: %w", err)), nil, nil
		}
		for _, raw := range page.Data {
			scanned++
			var l struct {
				Code      string  `json:"code"`
				TargetURL string  `json:"target_url"`
				Title     *string `json:"title"`
			}
			_ = json.Unmarshal(raw, &l)
			hay := strings.ToLower(l.Code + "\n" + l.TargetURL)
			if l.Title != nil {
				hay += "\n" + strings.ToLower(*l.Title)
			}
			if strings.Contains(hay, needle) && len(matches) < want {
				matches = append(matches, raw)
			}
		}
		if !page.HasMore || page.NextCursor == nil {
			complete = true
			break
		}
		cursor = *page.NextCursor
	}
	out, _ := json.Marshal(map[string]any{"object": "list", "data": matches, "scanned": scanned, "complete": complete})
	return &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: string(out)}},
		StructuredContent: json.RawMessage(out),
	}, nil, nil
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
	resp, err := d.do(ctx, call{method: http.MethodGet, path: linkPath(in.ID, "/qr"), query: q})
	if err != nil {
		return failure(err), nil, nil
	}
	if resp.status != http.StatusOK {
		return resp.problemResult(), nil, nil
	}
	mime := resp.header.Get("Content-Type")
	return &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.ImageContent{Data: resp.body, MIMEType: mime},
		&sdk.TextContent{Text: fmt.Sprintf("QR code of link %s (%s, %d bytes); it encodes the link's short_url.", in.ID, mime, len(resp.body))},
	}}, nil, nil
}
