package typescript_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/strict"
)

// TestMCPSignInWithDynamicRegistration: the MCP TypeScript SDK's own
// OAuth client (test/mcp-signin.mjs) connects to /mcp with nothing
// pre-registered. It discovers the authorization server, registers itself
// (RFC 7591), and sends the user to the consent page, which this test
// answers as the browser would: sign-in form, then Allow. The SDK gets
// the code on its loopback redirect URI, finishes the sign-in, lists the
// tools and creates a link, acting in the user's workspace with a token
// whose audience is /mcp.
func TestMCPSignInWithDynamicRegistration(t *testing.T) {
	strict.SkipShort(t, "MCP sign-in through the TypeScript MCP SDK (npm, Node.js)")
	node := testkit.RequireBinary(t, "node")
	npm := testkit.RequireBinary(t, "npm")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := os.Stat("node_modules/@modelcontextprotocol/sdk"); err != nil {
		run(ctx, t, nil, npm, "ci", "--no-audit", "--no-fund")
	}
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)

	cmd := exec.CommandContext(ctx, node, "test/mcp-signin.mjs")
	cmd.Env = append(os.Environ(), "LINKQR_MCP_URL="+srv.URL+"/mcp")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	next := func(key string) json.RawMessage {
		t.Helper()
		for lines.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(lines.Bytes(), &m) == nil && m[key] != nil {
				return m[key]
			}
		}
		_ = cmd.Wait()
		t.Fatalf("node printed no %q line; stderr:\n%s", key, stderr.String())
		return nil
	}

	var authorize string
	if err := json.Unmarshal(next("authorize"), &authorize); err != nil {
		t.Fatal(err)
	}
	consent(t, srv, tn, authorize)

	var done struct {
		ClientID     string         `json:"client_id"`
		Tools        []string       `json:"tools"`
		Link         map[string]any `json:"link"`
		Aud          string         `json:"aud"`
		Scope        string         `json:"scope"`
		RefreshToken bool           `json:"refresh_token"`
	}
	if err := json.Unmarshal(next("done"), &done); err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node: %v; stderr:\n%s", err, stderr.String())
	}
	if !strings.HasPrefix(done.ClientID, "cli_") || done.Aud != srv.URL+"/mcp" || !done.RefreshToken ||
		!slices.Contains(done.Tools, "create_link") || !slices.Contains(done.Tools, "list_webhooks") {
		t.Errorf("signed-in client: %+v", done)
	}
	// The link exists in the user's workspace.
	id, _ := done.Link["id"].(string)
	got := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/links/"+id, srv.APIKey(t, tn.WorkspaceID, "links:read"), ""), http.StatusOK)
	if got["target_url"] != "https://example.com/signed-in-via-dcr" {
		t.Errorf("link %v", got)
	}
}

// consent plays the user's browser: the authorization URL sends it to
// sign in, then back to the consent page, whose form it submits with
// Allow; the answer's redirect goes to the client's loopback callback.
func consent(t *testing.T, srv *testkit.Server, tn testkit.Tenant, authorize string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if !strings.HasPrefix(authorize, srv.URL+"/oauth/authorize?") {
		t.Fatalf("authorization URL %q", authorize)
	}
	q, _ := url.ParseQuery(strings.SplitN(authorize, "?", 2)[1])
	if q.Get("resource") != srv.URL+"/mcp" || q.Get("code_challenge_method") != "S256" {
		t.Errorf("authorization request %v", q)
	}
	resp := browse(t, b, http.MethodGet, authorize, nil, srv.URL)
	if resp.status != http.StatusSeeOther || resp.location != "/login" {
		t.Fatalf("authorize, signed out: %d %q", resp.status, resp.location)
	}
	if login := browse(t, b, http.MethodGet, srv.URL+"/login", nil, srv.URL); login.status != http.StatusOK ||
		!strings.Contains(login.body, "linkqr e2e MCP client (self-registered; its name is unverified)") {
		t.Errorf("sign-in page: %d %s", login.status, login.body)
	}
	resp = browse(t, b, http.MethodPost, srv.URL+"/login", url.Values{"email": {tn.Email}, "password": {tn.Password}}, srv.URL)
	if resp.status != http.StatusSeeOther || !strings.HasPrefix(resp.location, "/oauth/authorize?") {
		t.Fatalf("sign in: %d %q", resp.status, resp.location)
	}
	page := browse(t, b, http.MethodGet, srv.URL+resp.location, nil, srv.URL)
	redirect, _ := url.Parse(q.Get("redirect_uri"))
	if page.status != http.StatusOK || !strings.Contains(page.body, `data-testid="consent-self-registered"`) ||
		!strings.Contains(page.body, "linkqr e2e MCP client") || !strings.Contains(page.body, "<code>"+redirect.Host+"</code>") {
		t.Fatalf("consent page: %d %s", page.status, page.body)
	}
	form := url.Values{"decision": {"allow"}, "workspace": {tn.WorkspaceExternalID()}}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)"`).FindAllStringSubmatch(page.body, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	resp = browse(t, b, http.MethodPost, srv.URL+"/oauth/authorize", form, srv.URL)
	if resp.status != http.StatusSeeOther || !strings.HasPrefix(resp.location, redirect.String()+"?") {
		t.Fatalf("consent: %d %q", resp.status, resp.location)
	}
	// The browser follows to the client's loopback callback.
	if cb := browse(t, http.DefaultClient, http.MethodGet, resp.location, nil, ""); cb.status != http.StatusOK {
		t.Fatalf("callback: %d %s", cb.status, cb.body)
	}
}

type answer struct {
	status   int
	location string
	body     string
}

// browse sends a request as a browser on linkqr's pages does (a form post
// from origin, when given, with its Fetch metadata).
func browse(t *testing.T, c *http.Client, method, u string, form url.Values, origin string) answer {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, location: resp.Header.Get("Location"), body: string(raw)}
}
