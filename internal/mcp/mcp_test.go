package mcp_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/mcp"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// connect opens an MCP session to srv's /mcp as the official Go SDK client.
func connect(t *testing.T, srv *testkit.Server, token string) *sdk.ClientSession {
	t.Helper()
	return srv.MCP(t, token)
}

func callTool(t *testing.T, s *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// ok returns the structured result of a successful call.
func ok(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	return structured(t, res)
}

func structured(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return m
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// toolNames lists the tools a session is shown, sorted.
func toolNames(t *testing.T, s *sdk.ClientSession) []string {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// TestToolsFollowScopes: a credential is shown only the tools its scopes
// allow (get_workspace always); every tool has a scope entry.
func TestToolsFollowScopes(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	for _, c := range []struct {
		scopes []string
		want   []string
	}{
		{[]string{"links:read"}, []string{"get_link", "get_link_qr", "get_links_qr_zip", "get_qr_design", "get_workspace", "list_links", "search_links"}},
		{[]string{"links:write"}, []string{"create_link", "create_links", "delete_link", "delete_link_qr_design", "delete_links", "edit_links", "get_workspace", "pause_link", "repoint_link", "resume_link", "set_link_destinations", "set_qr_design", "update_link"}},
		{[]string{"webhooks:read"}, []string{"get_workspace", "list_webhook_deliveries", "list_webhooks"}},
		{[]string{"webhooks:write"}, []string{"create_webhook", "delete_webhook", "get_workspace", "rotate_webhook_secret", "test_webhook", "update_webhook"}},
		{[]string{"domains:write"}, []string{"get_workspace"}},
		{[]string{"members:read"}, []string{"get_workspace", "list_members"}},
		{[]string{"members:write"}, []string{"create_invitation", "get_workspace", "list_invitations", "remove_member", "revoke_invitation", "update_member_role"}},
		{[]string{"audit:read"}, []string{"get_workspace", "list_audit_events"}},
	} {
		got := toolNames(t, connect(t, srv, srv.APIKey(t, tn.WorkspaceID, c.scopes...)))
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: tools %v, want %v", c.scopes, got, c.want)
		}
	}
	all := toolNames(t, connect(t, srv, srv.APIKey(t, tn.WorkspaceID)))
	for _, name := range all {
		if _, ok := mcp.ToolScope(name); !ok {
			t.Errorf("%s has no scope entry", name)
		}
	}
}

func TestListTools(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	s := connect(t, srv, srv.APIKey(t, tn.WorkspaceID, scope.Strings(scope.All)...))
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if title := tool.Annotations.Title; !titleCase(title) {
			t.Errorf("%s: annotation title %q is not in Title Case", tool.Name, title)
		}
		if schema, _ := json.Marshal(tool.InputSchema); strings.Contains(string(schema), "max_results") {
			t.Errorf("%s: page size is limit everywhere", tool.Name)
		}
		if len(tool.Description) < 40 {
			t.Errorf("%s: description too thin: %q", tool.Name, tool.Description)
		}
		schema, _ := json.Marshal(tool.InputSchema)
		if !strings.Contains(string(schema), `"type":"object"`) || !strings.Contains(string(schema), `"additionalProperties":false`) {
			t.Errorf("%s: input schema %s", tool.Name, schema)
		}
	}
	want := []string{"create_invitation", "create_link", "create_links", "create_webhook", "delete_link", "delete_link_qr_design", "delete_links", "delete_webhook", "edit_links", "get_link", "get_link_analytics", "get_link_qr", "get_links_qr_zip",
		"get_qr_design", "get_workspace", "list_audit_events", "list_domains", "list_invitations", "list_link_scans", "list_links", "list_members", "list_webhook_deliveries", "list_webhooks", "pause_link",
		"remove_member", "repoint_link", "resume_link", "revoke_invitation", "rotate_webhook_secret", "search_links", "set_link_destinations", "set_qr_design", "test_webhook",
		"update_link", "update_member_role", "update_webhook"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

func TestLinkTools(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	token := srv.APIKey(t, tn.WorkspaceID, "links:read", "links:write", "analytics:read")
	s := connect(t, srv, token)

	created := ok(t, callTool(t, s, "create_link", map[string]any{
		"target_url": "https://example.com/spring", "title": "Spring menu", "idempotency_key": "mcp-test-1"}))
	id, _ := created["id"].(string)
	if created["object"] != "link" || !strings.HasPrefix(id, "lnk_") || created["target_url"] != "https://example.com/spring" {
		t.Fatalf("created %v", created)
	}
	// The same key and arguments: the API's idempotency replays the first link.
	again := ok(t, callTool(t, s, "create_link", map[string]any{
		"target_url": "https://example.com/spring", "title": "Spring menu", "idempotency_key": "mcp-test-1"}))
	if again["id"] != id {
		t.Errorf("replay made another link: %v vs %v", again["id"], id)
	}
	other := ok(t, callTool(t, s, "create_link", map[string]any{"target_url": "https://example.org/other", "code": "other-code"}))

	// Many at once, with tags; then found by tag and re-tagged.
	bulk := ok(t, callTool(t, s, "create_links", map[string]any{"links": []any{
		map[string]any{"target_url": "https://example.com/shop/1", "tags": []string{"Shops", "print"}},
		map[string]any{"target_url": "ftp://example.com/bad"},
		map[string]any{"target_url": "https://example.com/shop/2", "tags": []string{"shops"}, "title": "Shop 2"},
	}}))
	if bulk["object"] != "bulk_result" || bulk["created"] != float64(2) || bulk["failed"] != float64(1) {
		t.Fatalf("create_links %v", bulk)
	}
	shop1 := bulk["data"].([]any)[0].(map[string]any)["link"].(map[string]any)
	tagged := ok(t, callTool(t, s, "search_links", map[string]any{"tags": []string{"shops", "PRINT"}}))
	if data := tagged["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != shop1["id"] {
		t.Errorf("search_links by tags %v", tagged)
	}
	updated := ok(t, callTool(t, s, "update_link", map[string]any{"id": shop1["id"], "title": "Shop one", "tags": []string{"menu"}, "expires_at": "2099-01-01T00:00:00Z"}))
	if updated["title"] != "Shop one" || fmt.Sprint(updated["tags"]) != "[menu]" || updated["expires_at"] != "2099-01-01T00:00:00Z" {
		t.Errorf("update_link %v", updated)
	}
	cleared := ok(t, callTool(t, s, "update_link", map[string]any{"id": shop1["id"], "title": "", "expires_at": ""}))
	if cleared["title"] != nil || cleared["expires_at"] != nil || fmt.Sprint(cleared["tags"]) != "[menu]" {
		t.Errorf("update_link clearing %v", cleared)
	}
	if res := callTool(t, s, "search_links", map[string]any{}); !res.IsError {
		t.Errorf("search_links without query or tags must fail: %v", res)
	}

	got := ok(t, callTool(t, s, "get_link", map[string]any{"id": id}))
	if got["title"] != "Spring menu" {
		t.Errorf("get_link %v", got)
	}
	list := ok(t, callTool(t, s, "list_links", map[string]any{"limit": 1}))
	if data := list["data"].([]any); len(data) != 1 || list["has_more"] != true || list["next_cursor"] == nil {
		t.Errorf("list_links page 1 %v", list)
	}
	found := ok(t, callTool(t, s, "search_links", map[string]any{"query": "SPRING"}))
	if data := found["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != id || found["has_more"] != false {
		t.Errorf("search_links %v", found)
	}
	if data := ok(t, callTool(t, s, "search_links", map[string]any{"query": "other-co"}))["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != other["id"] {
		t.Errorf("search by code %v", data)
	}

	// Destinations: rules and a limit set, a password set then removed;
	// a bad country is refused with its pointer.
	dest := ok(t, callTool(t, s, "set_link_destinations", map[string]any{"id": id,
		"rules":    []any{map[string]any{"if": map[string]any{"os": []any{"Android"}}, "target_url": "https://example.com/android"}},
		"password": "pw-123", "max_scans": 1000}))
	if r, _ := dest["rules"].([]any); len(r) != 1 || dest["password_protected"] != true || dest["max_scans"] != float64(1000) {
		t.Errorf("set_link_destinations %v", dest)
	}
	dest = ok(t, callTool(t, s, "set_link_destinations", map[string]any{"id": id, "rules": nil, "password": nil, "max_scans": nil}))
	if dest["rules"] != nil || dest["password_protected"] != false || dest["max_scans"] != nil {
		t.Errorf("set_link_destinations with nulls %v", dest)
	}
	if res := callTool(t, s, "set_link_destinations", map[string]any{"id": id,
		"rules": []any{map[string]any{"if": map[string]any{"country": []any{"Germany"}}, "target_url": "https://example.com/de"}}}); !res.IsError ||
		!strings.Contains(text(res), "/rules/0/if/country/0") {
		t.Errorf("a bad country: %s", text(res))
	}

	// Re-point: the very next redirect goes to the new target.
	moved := ok(t, callTool(t, s, "repoint_link", map[string]any{"id": id, "target_url": "https://example.com/summer"}))
	if moved["target_url"] != "https://example.com/summer" {
		t.Errorf("repoint %v", moved)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodGet, created["short_url"].(string), nil)
	req.Header.Set("User-Agent", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1")
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "https://example.com/summer" {
		t.Fatalf("redirect %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	// Analytics: the scan is written by the batching writer; poll until it shows.
	var an map[string]any
	wait.Until(t, 60*time.Second, func() (bool, string) {
		an = ok(t, callTool(t, s, "get_link_analytics", map[string]any{"id": id, "interval": "day"}))
		return an["total"] == float64(1), fmt.Sprintf("analytics %v", an)
	})
	if an["object"] != "analytics" || an["total"] != float64(1) || len(an["series"].([]any)) == 0 || len(an["devices"].([]any)) != 1 {
		t.Errorf("analytics %v", an)
	}
	// The plain short URL from loopback: a link scan of no known country.
	if fmt.Sprint(an["countries"]) != "[map[key:(unknown) scans:1]]" || fmt.Sprint(an["sources"]) != "[map[key:link scans:1]]" {
		t.Errorf("analytics countries %v, sources %v", an["countries"], an["sources"])
	}
	// In a time zone: the answer echoes it and the day buckets start at its
	// midnights (Kolkata's are at 18:30 UTC); an unknown one is a tool error.
	inZone := ok(t, callTool(t, s, "get_link_analytics", map[string]any{"id": id, "interval": "day", "timezone": "Asia/Kolkata"}))
	if series := inZone["series"].([]any); inZone["timezone"] != "Asia/Kolkata" || len(series) == 0 ||
		!strings.HasSuffix(series[0].(map[string]any)["start"].(string), "T18:30:00Z") {
		t.Errorf("analytics in Asia/Kolkata: %v", inZone)
	}
	if res := callTool(t, s, "get_link_analytics", map[string]any{"id": id, "timezone": "Mars/Olympus"}); !res.IsError || !strings.Contains(text(res), "IANA time zone") {
		t.Errorf("unknown zone: %s", text(res))
	}
	scans := ok(t, callTool(t, s, "list_link_scans", map[string]any{"id": id}))
	if data := scans["data"].([]any); len(data) != 1 || data[0].(map[string]any)["device"] != "mobile" {
		t.Errorf("scans %v", scans)
	}

	// QR: an image that decodes to the short URL, marked as a QR code's.
	qr := callTool(t, s, "get_link_qr", map[string]any{"id": id, "size": 256})
	if qr.IsError || len(qr.Content) == 0 {
		t.Fatalf("qr %s", text(qr))
	}
	img, isImg := qr.Content[0].(*sdk.ImageContent)
	if !isImg || img.MIMEType != "image/png" {
		t.Fatalf("qr content %#v", qr.Content[0])
	}
	decoded, err := png.Decode(bytes.NewReader(img.Data))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := testkit.DecodeQR(t, decoded), created["short_url"].(string)+"?qr=1"; got != want {
		t.Errorf("QR encodes %q, want %q", got, want)
	}

	// QR design: set dots and a frame, the image follows, the design reads back.
	if d := ok(t, callTool(t, s, "set_qr_design", map[string]any{"link_id": id, "modules": "dots", "frame_text": "Scan me", "fg": "1A237E"})); d["modules"] != "dots" || d["link_id"] != id {
		t.Errorf("set_qr_design: %v", d)
	}
	if d := ok(t, callTool(t, s, "get_qr_design", map[string]any{"link_id": id})); fmt.Sprint(d["frame"]) != "map[color:1A237E text:Scan me]" {
		t.Errorf("get_qr_design: %v", d)
	}
	if d := ok(t, callTool(t, s, "get_qr_design", map[string]any{})); d["link_id"] != nil || d["modules"] != "square" {
		t.Errorf("workspace default: %v", d)
	}
	unreadable := callTool(t, s, "set_qr_design", map[string]any{"link_id": id, "margin": 0})
	if !unreadable.IsError || !strings.Contains(text(unreadable), "qr-unreadable") {
		t.Errorf("unreadable design: %s", text(unreadable))
	}
	designed := callTool(t, s, "get_link_qr", map[string]any{"id": id, "format": "svg"})
	if svg, isImg := designed.Content[0].(*sdk.ImageContent); !isImg || !strings.Contains(string(svg.Data), ">Scan me</text>") {
		t.Errorf("designed QR %s", text(designed))
	}
	pdf := callTool(t, s, "get_link_qr", map[string]any{"id": id, "format": "pdf"})
	if res, isRes := pdf.Content[0].(*sdk.EmbeddedResource); !isRes || res.Resource.MIMEType != "application/pdf" || !bytes.HasPrefix(res.Resource.Blob, []byte("%PDF-")) {
		t.Errorf("PDF QR %#v", pdf.Content[0])
	}
	// The ZIP of chosen links: one file per link, named after its code, that decodes to its short URL.
	zipped := callTool(t, s, "get_links_qr_zip", map[string]any{"ids": []string{id}, "size": 256})
	res, isRes := zipped.Content[0].(*sdk.EmbeddedResource)
	if zipped.IsError || !isRes || res.Resource.MIMEType != "application/zip" {
		t.Fatalf("QR ZIP %s", text(zipped))
	}
	zr, err := zip.NewReader(bytes.NewReader(res.Resource.Blob), int64(len(res.Resource.Blob)))
	if err != nil || len(zr.File) != 1 || zr.File[0].Name != created["code"].(string)+".png" {
		t.Fatalf("QR ZIP files %v (%v)", zr, err)
	}
	f, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	zipped0, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := testkit.DecodeQR(t, zipped0), created["short_url"].(string)+"?qr=1"; got != want {
		t.Errorf("the ZIP's code encodes %q, want %q", got, want)
	}
	if bad := callTool(t, s, "get_links_qr_zip", map[string]any{"status": "expired", "format": "gif"}); !bad.IsError {
		t.Errorf("ZIP of a bad format: %s", text(bad))
	}
	ok(t, callTool(t, s, "delete_link_qr_design", map[string]any{"id": id}))
	if d := ok(t, callTool(t, s, "get_qr_design", map[string]any{"link_id": id})); d["link_id"] != nil {
		t.Errorf("after delete_link_qr_design: %v", d)
	}

	if st := ok(t, callTool(t, s, "pause_link", map[string]any{"id": id}))["status"]; st != "paused" {
		t.Errorf("pause: %v", st)
	}
	if st := ok(t, callTool(t, s, "resume_link", map[string]any{"id": id}))["status"]; st != "active" {
		t.Errorf("resume: %v", st)
	}
	ok(t, callTool(t, s, "delete_link", map[string]any{"id": id}))
	gone := callTool(t, s, "get_link", map[string]any{"id": id})
	if !gone.IsError || structured(t, gone)["status"] != float64(404) {
		t.Errorf("get after delete: %s", text(gone))
	}
}

func TestProblemsBecomeToolErrors(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	readOnly := connect(t, srv, srv.APIKey(t, tn.WorkspaceID, "links:read"))

	// A tool the credential's scopes do not allow is not offered at all.
	if _, err := readOnly.CallTool(context.Background(), &sdk.CallToolParams{Name: "create_link", Arguments: map[string]any{"target_url": "https://example.com/x"}}); err == nil ||
		!strings.Contains(err.Error(), `unknown tool "create_link"`) {
		t.Errorf("create_link with links:read: %v", err)
	}
	if data := ok(t, callTool(t, readOnly, "list_links", nil))["data"].([]any); len(data) != 0 {
		t.Errorf("a refused create made a link: %v", data)
	}
	if names := toolNames(t, readOnly); slices.Contains(names, "get_link_analytics") {
		t.Errorf("analytics offered without analytics:read: %v", names)
	}

	writer := connect(t, srv, srv.APIKey(t, tn.WorkspaceID, "links:read", "links:write"))
	res := callTool(t, writer, "create_link", map[string]any{"target_url": "https://user:pw@example.com/x"})
	p := structured(t, res)
	errs, _ := p["errors"].([]any)
	if !res.IsError || p["status"] != float64(422) || len(errs) != 1 || errs[0].(map[string]any)["pointer"] != "/target_url" ||
		!strings.Contains(text(res), "/target_url") {
		t.Errorf("validation: %s", text(res))
	}
	// Arguments off the tool's schema never reach the API.
	res = callTool(t, writer, "create_link", map[string]any{"target_url": "https://example.com", "colour": "red"})
	if !res.IsError {
		t.Errorf("unknown argument accepted: %s", text(res))
	}
	if data := ok(t, callTool(t, writer, "list_links", nil))["data"].([]any); len(data) != 0 {
		t.Errorf("refused creates made links: %v", data)
	}
}

func TestRateLimitAndAllowlistApply(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	mint := func(in apikey.CreateInput) string {
		in.Name = "mcp"
		_, token, err := srv.App.Keys.Create(context.Background(), tn.WorkspaceID, nil, in)
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	// A budget of 2 a minute: two tool calls pass, the third is the API's 429.
	two := 2
	s := connect(t, srv, mint(apikey.CreateInput{Scopes: []string{"links:read"}, RateLimitPerMinute: &two}))
	ok(t, callTool(t, s, "list_links", nil))
	ok(t, callTool(t, s, "list_links", nil))
	res := callTool(t, s, "list_links", nil)
	p := structured(t, res)
	if !res.IsError || p["status"] != float64(429) || p["retry_after_seconds"] == nil {
		t.Errorf("third call: %s", text(res))
	}

	// Outside the allowlist, /mcp itself answers 403 ip-not-allowed.
	far := mint(apikey.CreateInput{Scopes: []string{"links:read"}, IPAllowlist: []string{"203.0.113.0/24"}})
	resp := post(t, srv.URL+"/mcp", far, initialize)
	testkit.Problem(t, resp, http.StatusForbidden, "ip-not-allowed")
	// Inside it, tool calls pass: the dispatched API request has the caller's address.
	near := mint(apikey.CreateInput{Scopes: []string{"links:read"}, IPAllowlist: []string{"127.0.0.0/8"}})
	ok(t, callTool(t, connect(t, srv, near), "list_links", nil))
}

// Behind a trusted proxy the client address comes from X-Forwarded-For, for
// /mcp and for the API calls its tools make alike.
func TestAllowlistBehindTrustedProxy(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_TRUSTED_PROXIES", "127.0.0.1/32"))
	tn := testkit.NewTenant(t, srv.Pool)
	_, token, err := srv.App.Keys.Create(context.Background(), tn.WorkspaceID, nil, apikey.CreateInput{
		Name: "proxied", Scopes: []string{"links:read"}, IPAllowlist: []string{"203.0.113.0/24"}})
	if err != nil {
		t.Fatal(err)
	}
	forwarded := func(addr string) *http.Client {
		return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.Header.Set("X-Forwarded-For", addr)
			r.Header.Set("Authorization", "Bearer "+token)
			return http.DefaultTransport.RoundTrip(r)
		})}
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: forwarded("203.0.113.9")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ok(t, callTool(t, s, "list_links", nil))
	if _, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: forwarded("198.51.100.9")}, nil); err == nil {
		t.Error("connected from outside the allowlist")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`

func post(t *testing.T, url, token, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestUnauthenticated(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	resp := post(t, srv.URL+"/mcp", "lqk_AAAAAAAAAAAA_"+strings.Repeat("B", 32), initialize)
	testkit.Problem(t, resp, http.StatusUnauthorized, "unauthorized")
	// The challenge points MCP clients at the RFC 9728 document.
	meta := `resource_metadata="` + srv.URL + `/.well-known/oauth-protected-resource/mcp"`
	if got := resp.Header.Get("WWW-Authenticate"); got != `Bearer realm="linkqr", error="invalid_token", `+meta {
		t.Errorf("WWW-Authenticate %q", got)
	}
	resp = post(t, srv.URL+"/mcp", "", initialize)
	testkit.Problem(t, resp, http.StatusUnauthorized, "unauthorized")
	if got := resp.Header.Get("WWW-Authenticate"); got != `Bearer realm="linkqr", `+meta {
		t.Errorf("WWW-Authenticate without a token %q", got)
	}

	// The SDK client fails to connect with a bad token.
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if s, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: testkit.BearerTransport("nope")}}, nil); err == nil {
		_ = s.Close()
		t.Error("connected with an invalid token")
	}
}

func TestWebhookTools(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	tn := testkit.NewTenant(t, srv.Pool)
	s := connect(t, srv, srv.APIKey(t, tn.WorkspaceID))
	wh := ok(t, callTool(t, s, "create_webhook", map[string]any{
		"url": "http://127.0.0.1:9/hook", "events": []string{"link.created"}, "description": "test receiver"}))
	if wh["object"] != "webhook" || !strings.HasPrefix(wh["secret"].(string), "whsec_") {
		t.Fatalf("create_webhook %v", wh)
	}
	list := ok(t, callTool(t, s, "list_webhooks", nil))
	if data := list["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != wh["id"] || data[0].(map[string]any)["secret"] != nil {
		t.Errorf("list_webhooks %v", list)
	}
	ok(t, callTool(t, s, "create_link", map[string]any{"target_url": "https://example.com/"}))
	var dl map[string]any
	wait.Until(t, 60*time.Second, func() (bool, string) {
		dl = ok(t, callTool(t, s, "list_webhook_deliveries", map[string]any{"webhook_id": wh["id"]}))
		return len(dl["data"].([]any)) > 0, fmt.Sprintf("deliveries %v", dl)
	})
	if data := dl["data"].([]any); len(data) == 0 || data[0].(map[string]any)["event_type"] != "link.created" {
		t.Errorf("deliveries %v", dl)
	}

	// A description PostgreSQL cannot store is a tool error naming the
	// field, never an internal one (it was a 500; issue 32).
	res := callTool(t, s, "create_webhook", map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"link.created"}, "description": "\u0000"})
	if p := structured(t, res); !res.IsError || p["status"] != float64(422) || !strings.Contains(text(res), "- /description: must not contain control characters") {
		t.Errorf("create_webhook with a NUL description: %s", text(res))
	}

	links := connect(t, srv, srv.APIKey(t, tn.WorkspaceID, "links:read"))
	if names := toolNames(t, links); slices.Contains(names, "list_webhooks") {
		t.Errorf("a links:read key is shown %v", names)
	}

	// Change, test, rotate and delete it.
	up := ok(t, callTool(t, s, "update_webhook", map[string]any{"webhook_id": wh["id"], "description": nil, "events": []string{"link.deleted", "link.created"}}))
	if up["description"] != nil || fmt.Sprint(up["events"]) != "[link.deleted link.created]" || up["url"] != "http://127.0.0.1:9/hook" {
		t.Errorf("update_webhook %v", up)
	}
	ping := ok(t, callTool(t, s, "test_webhook", map[string]any{"webhook_id": wh["id"]}))
	if ping["object"] != "delivery" || ping["event_type"] != "ping" {
		t.Errorf("test_webhook %v", ping)
	}
	rot := ok(t, callTool(t, s, "rotate_webhook_secret", map[string]any{"webhook_id": wh["id"]}))
	if sec, _ := rot["secret"].(string); !strings.HasPrefix(sec, "whsec_") || sec == wh["secret"] {
		t.Errorf("rotate_webhook_secret %v", rot)
	}
	if res := callTool(t, s, "delete_webhook", map[string]any{"webhook_id": wh["id"]}); res.IsError {
		t.Errorf("delete_webhook %s", text(res))
	}
	if res := callTool(t, s, "update_webhook", map[string]any{"webhook_id": wh["id"], "status": "enabled"}); !res.IsError || structured(t, res)["status"] != float64(404) {
		t.Errorf("update after delete: %s", text(res))
	}
}

// TestUpdateLinkTool: update_link changes title and expiry, "" clears
// them, and fields not given stay.
func TestUpdateLinkTool(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	s := connect(t, srv, srv.APIKey(t, tn.WorkspaceID))
	l := ok(t, callTool(t, s, "create_link", map[string]any{"target_url": "https://example.com/u", "title": "Old"}))
	got := ok(t, callTool(t, s, "update_link", map[string]any{"id": l["id"], "title": "New", "expires_at": "2099-01-01T00:00:00Z"}))
	if got["title"] != "New" || got["expires_at"] != "2099-01-01T00:00:00Z" || got["target_url"] != "https://example.com/u" {
		t.Errorf("update_link %v", got)
	}
	got = ok(t, callTool(t, s, "update_link", map[string]any{"id": l["id"], "title": "", "expires_at": ""}))
	if got["title"] != nil || got["expires_at"] != nil {
		t.Errorf("update_link clearing %v", got)
	}
	res := callTool(t, s, "update_link", map[string]any{"id": l["id"], "expires_at": "2001-01-01T00:00:00Z"})
	if p := structured(t, res); !res.IsError || p["status"] != float64(422) {
		t.Errorf("an expiry in the past: %s", text(res))
	}
}

// TestUTMTools: create_link, create_links and update_link take the five
// UTM parameters (their schemas list them), "" in update_link removes one,
// and a refused value is the API's 422 naming its pointer.
func TestUTMTools(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	s := connect(t, srv, srv.APIKey(t, tn.WorkspaceID))
	tools, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name != "create_link" && tool.Name != "update_link" && tool.Name != "create_links" {
			continue
		}
		raw, _ := json.Marshal(tool.InputSchema)
		for _, name := range []string{"utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"} {
			if !strings.Contains(string(raw), `"`+name+`"`) {
				t.Errorf("%s's schema lacks %s", tool.Name, name)
			}
		}
	}
	l := ok(t, callTool(t, s, "create_link", map[string]any{"target_url": "https://example.com/m?utm_source=x", "utm_source": "newsletter", "utm_campaign": "spring"}))
	if l["utm_source"] != "newsletter" || l["utm_campaign"] != "spring" || l["utm_medium"] != nil || l["target_url"] != "https://example.com/m?utm_source=x" {
		t.Errorf("create_link %v", l)
	}
	got := ok(t, callTool(t, s, "update_link", map[string]any{"id": l["id"], "utm_source": "", "utm_medium": "email"}))
	if got["utm_source"] != nil || got["utm_medium"] != "email" || got["utm_campaign"] != "spring" {
		t.Errorf("update_link %v", got)
	}
	bulk := ok(t, callTool(t, s, "create_links", map[string]any{"links": []any{map[string]any{"target_url": "https://example.com/b", "utm_content": "banner"}}}))
	if item := bulk["data"].([]any)[0].(map[string]any)["link"].(map[string]any); item["utm_content"] != "banner" {
		t.Errorf("create_links %v", bulk)
	}
	res := callTool(t, s, "update_link", map[string]any{"id": l["id"], "utm_term": "tab\there"})
	if p := structured(t, res); !res.IsError || p["status"] != float64(422) || !strings.Contains(fmt.Sprint(p["errors"]), "/utm_term") {
		t.Errorf("a control character: %s", text(res))
	}
}

// TestSearchAllWords: every word of the query must match, in any order
// and across title, code and target; pages continue with next_cursor.
func TestSearchAllWords(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	s := connect(t, srv, srv.APIKey(t, tn.WorkspaceID))
	a := ok(t, callTool(t, s, "create_link", map[string]any{"target_url": "https://example.com/sdk", "title": "Launch page"}))
	b := ok(t, callTool(t, s, "create_link", map[string]any{"target_url": "https://example.com/sdk-docs", "title": "SDK launch"}))
	ok(t, callTool(t, s, "create_link", map[string]any{"target_url": "https://example.com/other", "title": "Launch party"}))
	ids := func(res map[string]any) []string {
		var out []string
		for _, l := range res["data"].([]any) {
			out = append(out, l.(map[string]any)["id"].(string))
		}
		return out
	}
	for q, want := range map[string][]string{
		"launch page sdk": {a["id"].(string)},
		"sdk launch":      {b["id"].(string), a["id"].(string)},
		"LAUNCH  SDK":     {b["id"].(string), a["id"].(string)},
		"sdk nothing":     nil,
	} {
		if got := ids(ok(t, callTool(t, s, "search_links", map[string]any{"query": q}))); !slices.Equal(got, want) {
			t.Errorf("%q found %v, want %v", q, got, want)
		}
	}
	first := ok(t, callTool(t, s, "search_links", map[string]any{"query": "sdk launch", "limit": 1}))
	if got := ids(first); len(got) != 1 || got[0] != b["id"] || first["has_more"] != true {
		t.Fatalf("first page %v", first)
	}
	second := ok(t, callTool(t, s, "search_links", map[string]any{"query": "sdk launch", "limit": 1, "cursor": first["next_cursor"]}))
	if got := ids(second); len(got) != 1 || got[0] != a["id"] {
		t.Errorf("second page %v", second)
	}
	if res := callTool(t, s, "search_links", map[string]any{"query": "sdk launch", "cursor": "nonsense"}); !res.IsError {
		t.Errorf("a foreign cursor: %s", text(res))
	}
}

// titleCase reports whether every word but short joining ones starts upper case.
func titleCase(s string) bool {
	if s == "" {
		return false
	}
	for _, w := range strings.Fields(s) {
		if w[0] >= 'a' && w[0] <= 'z' && !slices.Contains([]string{"a", "of", "to", "and", "or"}, w) {
			return false
		}
	}
	return true
}

func TestDomainTools(t *testing.T) {
	t.Parallel()
	dnsSrv := testkit.StartDNS(t)
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_DNS_RESOLVER", dnsSrv.Addr))
	tn := testkit.NewTenant(t, srv.Pool)
	other := testkit.NewTenant(t, srv.Pool)
	token := srv.APIKey(t, tn.WorkspaceID)
	for ws, host := range map[string]string{token: "go.acme.com", srv.APIKey(t, other.WorkspaceID): "go.other.example"} {
		testkit.JSON(t, srv.Do(t, "POST", "/api/v1/domains", ws, `{"hostname":"`+host+`"}`), 201)
	}
	s := connect(t, srv, token)
	list := ok(t, callTool(t, s, "list_domains", map[string]any{"limit": 10}))
	data := list["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["hostname"] != "go.acme.com" || data[0].(map[string]any)["status"] != "pending" {
		t.Errorf("list_domains %v", list)
	}
	// A link goes on a domain once it is verified, and only then.
	res := callTool(t, s, "create_link", map[string]any{"target_url": "https://acme.com/", "domain": "go.acme.com"})
	if p := structured(t, res); !res.IsError || !strings.Contains(text(res), "/domain") {
		t.Errorf("create_link on a pending domain: %v %s", p, text(res))
	}
	srv.VerifiedDomain(t, dnsSrv, srv.APIKey(t, tn.WorkspaceID), "go.verified.example")
	created := ok(t, callTool(t, s, "create_link", map[string]any{"target_url": "https://acme.com/", "domain": "go.verified.example", "code": "docs"}))
	if created["domain"] != "go.verified.example" || created["short_url"] != "https://go.verified.example/docs" {
		t.Errorf("create_link on a verified domain: %v", created)
	}
	if names := toolNames(t, connect(t, srv, srv.APIKey(t, tn.WorkspaceID, "links:read", "links:write"))); slices.Contains(names, "list_domains") {
		t.Errorf("list_domains without domains:read: %v", names)
	}
}

// TestAuditTool: list_audit_events lists the workspace's audit log with
// the API's filters, is offered only with audit:read, and a bad filter
// is a tool error naming the parameter.
func TestAuditTool(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	full := srv.APIKey(t, tn.WorkspaceID)
	testkit.JSON(t, srv.Do(t, "POST", "/api/v1/domains", full, `{"hostname":"go.audit.example"}`), 201)
	s := connect(t, srv, srv.APIKey(t, tn.WorkspaceID, "audit:read"))
	list := ok(t, callTool(t, s, "list_audit_events", map[string]any{"limit": 10, "action": "domain."}))
	data := list["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["action"] != "domain.created" || data[0].(map[string]any)["object"] != "audit_event" {
		t.Errorf("list_audit_events %v", list)
	}
	all := ok(t, callTool(t, s, "list_audit_events", map[string]any{}))
	if n := len(all["data"].([]any)); n != 3 { // two keys minted, one domain
		t.Errorf("%d entries without filters: %v", n, all)
	}
	if res := callTool(t, s, "list_audit_events", map[string]any{"since": "yesterday"}); !res.IsError || !strings.Contains(text(res), "/query/since") {
		t.Errorf("a bad filter: %s", text(res))
	}
	if names := toolNames(t, connect(t, srv, srv.APIKey(t, tn.WorkspaceID, "links:read", "links:write"))); slices.Contains(names, "list_audit_events") {
		t.Errorf("list_audit_events without audit:read: %v", names)
	}
}

// The RFC 9728 document names this issuer (whose RFC 8414 metadata the
// OAuth server serves) for the API and for /mcp, and /mcp accepts OAuth
// access tokens like API keys.
func TestProtectedResourceMetadata(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	testkit.JSON(t, testkit.Get(t, srv.URL+"/.well-known/oauth-authorization-server", nil), http.StatusOK)
	for p, resource := range map[string]string{
		"/.well-known/oauth-protected-resource":        srv.URL,
		"/.well-known/oauth-protected-resource/mcp":    srv.URL + "/mcp",
		"/.well-known/oauth-protected-resource/api/v1": srv.URL + "/api/v1",
	} {
		doc := testkit.JSON(t, testkit.Get(t, srv.URL+p, nil), http.StatusOK)
		servers, _ := doc["authorization_servers"].([]any)
		scopes, _ := doc["scopes_supported"].([]any)
		if doc["resource"] != resource || len(servers) != 1 || servers[0] != srv.URL || len(scopes) != len(scope.All) {
			t.Errorf("%s: %v", p, doc)
		}
	}
	// Now a 401 on /mcp points MCP clients at the document.
	resp := post(t, srv.URL+"/mcp", "", initialize)
	testkit.Problem(t, resp, http.StatusUnauthorized, "unauthorized")
	want := `Bearer realm="linkqr", resource_metadata="` + srv.URL + `/.well-known/oauth-protected-resource/mcp"`
	if got := resp.Header.Get("WWW-Authenticate"); got != want {
		t.Errorf("WWW-Authenticate %q, want %q", got, want)
	}
	// Authenticated requests are untouched.
	tn := testkit.NewTenant(t, srv.Pool)
	s := connect(t, srv, srv.APIKey(t, tn.WorkspaceID, "links:read"))
	ok(t, callTool(t, s, "list_links", nil))

	// An OAuth access token works on /mcp too, with its scopes.
	ctx := context.Background()
	c, secret, err := srv.App.OAuth.CreateClient(ctx, oauth.CreateInput{GrantType: oauth.GrantClientCredentials, WorkspaceID: &tn.WorkspaceID, Name: "mcp", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := srv.App.OAuth.ClientCredentials(ctx, oauth.ClientAuth{ClientID: c.ExternalID(), Secret: secret, HasSecret: true}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	js := connect(t, srv, tok.AccessToken)
	ok(t, callTool(t, js, "list_links", nil))
	if names := toolNames(t, js); slices.Contains(names, "list_webhooks") {
		t.Errorf("a links:read token is offered list_webhooks: %v", names)
	}
}

// search_links is the API's server-side search: it finds a link however
// old, pages with a cursor, and filters by status.
func TestSearchLinksPages(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	testkit.Link(t, srv.Pool, &testkit.LinkOpts{WorkspaceID: tn.WorkspaceID, Code: "needle-oldest", TargetURL: "https://example.org/needle"})
	for range 150 {
		testkit.Link(t, srv.Pool, &testkit.LinkOpts{WorkspaceID: tn.WorkspaceID})
	}
	testkit.Link(t, srv.Pool, &testkit.LinkOpts{WorkspaceID: tn.WorkspaceID, Code: "needle-newest", TargetURL: "https://example.org/needle-2"})
	s := connect(t, srv, srv.APIKey(t, tn.WorkspaceID, "links:read"))
	first := ok(t, callTool(t, s, "search_links", map[string]any{"query": "NEEDLE", "limit": 1}))
	data := first["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["code"] != "needle-newest" || first["has_more"] != true {
		t.Fatalf("first page of one: %v", first)
	}
	second := ok(t, callTool(t, s, "search_links", map[string]any{"query": "NEEDLE", "limit": 1, "cursor": first["next_cursor"]}))
	if data := second["data"].([]any); len(data) != 1 || data[0].(map[string]any)["code"] != "needle-oldest" || second["has_more"] != false {
		t.Errorf("second page: %v", second)
	}
	if data := ok(t, callTool(t, s, "search_links", map[string]any{"query": "needle", "status": "paused"}))["data"].([]any); len(data) != 0 {
		t.Errorf("no needle is paused, found %d", len(data))
	}
}

// TestOutputSchemas: every JSON tool declares an outputSchema taken from
// the OpenAPI document's schemas, and real answers (and tool errors)
// validate against it.
func TestOutputSchemas(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	tn := testkit.NewTenant(t, srv.Pool)
	member := srv.AddMember(t, tn, account.RoleMember)
	s := connect(t, srv, srv.APIKey(t, tn.WorkspaceID, scope.Strings(scope.All)...))
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	rawSchemas := map[string]string{}
	for _, tool := range res.Tools {
		if tool.Name == "get_link_qr" || tool.Name == "get_links_qr_zip" {
			if tool.OutputSchema != nil {
				t.Errorf("%s answers a file, yet has an outputSchema", tool.Name)
			}
			continue
		}
		raw, _ := json.Marshal(tool.OutputSchema)
		rawSchemas[tool.Name] = string(raw)
		var js jsonschema.Schema
		if err := json.Unmarshal(raw, &js); err != nil || js.Type != "object" {
			t.Errorf("%s: outputSchema %s (%v)", tool.Name, raw, err)
			continue
		}
		r, err := js.Resolve(nil)
		if err != nil {
			t.Errorf("%s: outputSchema does not resolve: %v", tool.Name, err)
			continue
		}
		schemas[tool.Name] = r
	}
	if raw := rawSchemas["get_link"]; !strings.Contains(raw, `"short_url"`) || !strings.Contains(raw, `"scan_count"`) {
		t.Errorf("get_link's outputSchema is not the document's Link: %s", raw)
	}
	check := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res := callTool(t, s, name, args)
		var v any
		raw, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(raw, &v)
		if err := schemas[name].Validate(v); err != nil {
			t.Errorf("%s answered %s, which its outputSchema refuses: %v", name, raw, err)
		}
		m, _ := v.(map[string]any)
		return m
	}
	link := check("create_link", map[string]any{"target_url": "https://example.com/o", "title": "Out"})
	check("get_link", map[string]any{"id": link["id"]})
	check("update_link", map[string]any{"id": link["id"], "title": ""})
	check("create_links", map[string]any{"links": []map[string]any{{"target_url": "https://example.com/b1"}, {"target_url": "ftp://x"}}})
	edited := check("edit_links", map[string]any{"ids": []string{link["id"].(string), "lnk_nope"}, "add_tags": []string{"mcp"}, "expires_at": ""})
	if d, _ := edited["data"].([]any); len(d) != 2 || !strings.Contains(fmt.Sprint(d[0]), "tags:[mcp]") {
		t.Errorf("edit_links: %v", edited)
	}
	other := check("create_link", map[string]any{"target_url": "https://example.com/gone"})
	if gone := check("delete_links", map[string]any{"ids": []string{other["id"].(string)}}); !strings.Contains(fmt.Sprint(gone["data"]), "status:200") {
		t.Errorf("delete_links: %v", gone)
	}
	check("list_links", nil)
	check("search_links", map[string]any{"query": "example out"})
	check("get_workspace", nil)
	check("get_link_analytics", map[string]any{"id": link["id"]})
	check("list_link_scans", map[string]any{"id": link["id"]})
	hook := check("create_webhook", map[string]any{"url": "http://127.0.0.1:9/o", "events": []string{"link.deleted"}})
	check("test_webhook", map[string]any{"webhook_id": hook["id"]})
	check("list_webhook_deliveries", map[string]any{"webhook_id": hook["id"]})
	check("rotate_webhook_secret", map[string]any{"webhook_id": hook["id"]})
	check("list_webhooks", nil)
	check("list_domains", nil)
	check("delete_webhook", map[string]any{"webhook_id": hook["id"]})
	check("delete_link", map[string]any{"id": link["id"]})
	memberID := id.Format(id.User, member.UserID)
	check("list_members", nil)
	check("update_member_role", map[string]any{"user_id": memberID, "role": "admin"})
	inv := check("create_invitation", map[string]any{"email": "schema@example.com", "role": "member"})
	check("list_invitations", nil)
	check("revoke_invitation", map[string]any{"invitation_id": inv["id"]})
	check("remove_member", map[string]any{"user_id": memberID})
	if p := check("remove_member", map[string]any{"user_id": memberID}); p["status"] != float64(404) {
		t.Errorf("remove_member twice: %v", p)
	}
	if p := check("get_link", map[string]any{"id": link["id"]}); p["status"] != float64(404) {
		t.Errorf("a tool error: %v", p)
	}
}

// TestMemberTools: the members and invitations tools act on the
// credential's workspace only, with the API's rules: the last admin stays,
// an accept link is shown once, another workspace's ids are not found.
func TestMemberTools(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	member := srv.AddMember(t, tn, account.RoleMember)
	otherMember := srv.AddMember(t, other, account.RoleMember)
	adminID, memberID := id.Format(id.User, tn.UserID), id.Format(id.User, member.UserID)
	otherMemberID := id.Format(id.User, otherMember.UserID)
	s := connect(t, srv, srv.APIKey(t, tn.WorkspaceID, "members:read", "members:write"))

	list := ok(t, callTool(t, s, "list_members", map[string]any{"limit": 1}))
	data := list["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["user_id"] != memberID || list["has_more"] != true {
		t.Fatalf("list_members, first page %v", list)
	}
	rest := ok(t, callTool(t, s, "list_members", map[string]any{"cursor": list["next_cursor"]}))
	if data := rest["data"].([]any); len(data) != 1 || data[0].(map[string]any)["user_id"] != adminID || data[0].(map[string]any)["role"] != "admin" {
		t.Errorf("list_members, second page %v", rest)
	}

	promoted := ok(t, callTool(t, s, "update_member_role", map[string]any{"user_id": memberID, "role": "admin"}))
	if promoted["object"] != "member" || promoted["role"] != "admin" || promoted["email"] != member.Email {
		t.Errorf("update_member_role %v", promoted)
	}
	ok(t, callTool(t, s, "update_member_role", map[string]any{"user_id": memberID, "role": "member"}))
	res := callTool(t, s, "update_member_role", map[string]any{"user_id": adminID, "role": "member"})
	if p := structured(t, res); !res.IsError || p["status"] != float64(409) || !strings.Contains(text(res), "last admin") {
		t.Errorf("demoting the last admin: %s", text(res))
	}
	res = callTool(t, s, "update_member_role", map[string]any{"user_id": memberID, "role": "owner"})
	if !res.IsError || !strings.Contains(text(res), "role") {
		t.Errorf("a bad role: %s", text(res))
	}
	for _, name := range []string{"update_member_role", "remove_member"} {
		res := callTool(t, s, name, map[string]any{"user_id": otherMemberID, "role": "admin"})
		if name == "remove_member" {
			res = callTool(t, s, name, map[string]any{"user_id": otherMemberID})
		}
		if p := structured(t, res); !res.IsError || p["status"] != float64(404) {
			t.Errorf("%s on another workspace's member: %s", name, text(res))
		}
	}

	inv := ok(t, callTool(t, s, "create_invitation", map[string]any{"email": "Grace@Example.com", "role": "admin", "idempotency_key": "mcp-invite"}))
	link, _ := inv["accept_url"].(string)
	if inv["object"] != "invitation" || inv["email"] != "grace@example.com" || inv["role"] != "admin" || !strings.HasPrefix(link, srv.URL+"/invitations/") {
		t.Fatalf("create_invitation %v", inv)
	}
	if again := ok(t, callTool(t, s, "create_invitation", map[string]any{"email": "Grace@Example.com", "role": "admin", "idempotency_key": "mcp-invite"})); again["id"] != inv["id"] {
		t.Errorf("create_invitation with the same key made %v", again)
	}
	invs := ok(t, callTool(t, s, "list_invitations", nil))
	if data := invs["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != inv["id"] || data[0].(map[string]any)["accept_url"] != nil {
		t.Errorf("list_invitations %v", invs)
	}
	otherInv := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/invitations", srv.APIKey(t, other.WorkspaceID, "members:write"), `{"email":"x@example.com","role":"member"}`), 201)
	if res := callTool(t, s, "revoke_invitation", map[string]any{"invitation_id": otherInv["id"]}); !res.IsError || structured(t, res)["status"] != float64(404) {
		t.Errorf("revoke_invitation of another workspace's: %s", text(res))
	}
	if res := callTool(t, s, "revoke_invitation", map[string]any{"invitation_id": inv["id"]}); res.IsError {
		t.Errorf("revoke_invitation %s", text(res))
	}
	if invs := ok(t, callTool(t, s, "list_invitations", nil)); len(invs["data"].([]any)) != 0 {
		t.Errorf("after revoking %v", invs)
	}

	if res := callTool(t, s, "remove_member", map[string]any{"user_id": memberID}); res.IsError {
		t.Errorf("remove_member %s", text(res))
	}
	res = callTool(t, s, "remove_member", map[string]any{"user_id": adminID})
	if p := structured(t, res); !res.IsError || p["status"] != float64(409) {
		t.Errorf("removing the last admin: %s", text(res))
	}
	if list := ok(t, callTool(t, s, "list_members", nil)); len(list["data"].([]any)) != 1 {
		t.Errorf("members after removal %v", list)
	}
	// The other workspace is as it was.
	if got := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/members", srv.APIKey(t, other.WorkspaceID, "members:read"), ""), 200); len(got["data"].([]any)) != 2 {
		t.Errorf("the other workspace's members %v", got)
	}
	// members:read alone lists, and is not offered the rest.
	if names := toolNames(t, connect(t, srv, srv.APIKey(t, tn.WorkspaceID, "members:read"))); slices.Contains(names, "create_invitation") || !slices.Contains(names, "list_members") {
		t.Errorf("a members:read key is shown %v", names)
	}
}

// A member's credential is offered exactly the tools whose scope the
// member role allows, whatever its key was granted (here every scope,
// minted while its owner was an admin), and calling an admin's tool fails
// as an unknown one; an admin's sees every tool.
func TestToolsFollowTheOwnersRole(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	ctx := context.Background()
	admin := testkit.NewTenant(t, srv.Pool)
	member := srv.AddMember(t, admin, account.RoleAdmin)
	_, memberKey := srv.UserAPIKey(t, member)
	allTools := toolNames(t, connect(t, srv, srv.APIKey(t, admin.WorkspaceID, scope.Strings(scope.All)...)))
	if _, err := srv.App.Accounts.SetRole(ctx, admin.WorkspaceID, member.UserID, account.RoleMember); err != nil {
		t.Fatal(err)
	}
	s := connect(t, srv, memberKey)
	got := toolNames(t, s)
	var want []string
	for _, name := range allTools {
		if need, _ := mcp.ToolScope(name); need == "" || scope.RoleMember.Permits(need) {
			want = append(want, name)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("a member's tools %v, want %v", got, want)
	}
	if len(want) == len(allTools) {
		t.Fatalf("no tool is for admins only: %v", allTools)
	}
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "list_webhooks", Arguments: map[string]any{}})
	if err == nil && !res.IsError {
		t.Errorf("a member called list_webhooks: %v", structured(t, res))
	}
}
