package app_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/testkit"
)

// HEAD answers like GET on every path a GET route serves, with no body;
// before, only the redirect registered HEAD, so HEAD /docs or /login went
// to /{code} and answered 404. A short URL's HEAD stays the redirect's.
func TestHeadAnswersLikeGet(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	token := srv.APIKey(t, tn.WorkspaceID)
	code := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/menu"}`), 201)["code"].(string)

	for _, tc := range []struct {
		path string
		want int
	}{
		{"/login", http.StatusOK},
		{"/signup", http.StatusOK},
		{"/docs", http.StatusOK},
		{"/problems", http.StatusOK},
		{"/healthz", http.StatusOK},
		{"/static/css/app.css", http.StatusOK},
		{"/api/v1/links", http.StatusUnauthorized}, // GET's authentication applies
		{"/" + code, http.StatusFound},
		{"/NoSuchCode1", http.StatusNotFound},
	} {
		get := fetchRaw(t, http.MethodGet, srv.URL+tc.path)
		req, err := http.NewRequest(http.MethodHead, srv.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || get.StatusCode != tc.want {
			t.Errorf("%s: HEAD %d, GET %d, want %d", tc.path, resp.StatusCode, get.StatusCode, tc.want)
		}
		if len(body) != 0 {
			t.Errorf("HEAD %s sent a body of %d bytes", tc.path, len(body))
		}
		if ct := resp.Header.Get("Content-Type"); ct != get.Header.Get("Content-Type") {
			t.Errorf("HEAD %s: Content-Type %q, GET's %q", tc.path, ct, get.Header.Get("Content-Type"))
		}
	}
}

// "mcp" is a code like any other (the contract does not reserve it): the
// link redirects on GET and HEAD /mcp, while MCP clients keep POSTing there
// and opening their event stream with GET and Accept: text/event-stream.
func TestMCPPathIsAlsoALinkCode(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	token := srv.APIKey(t, tn.WorkspaceID)
	if r := fetchRaw(t, http.MethodGet, srv.URL+"/mcp"); r.StatusCode != http.StatusNotFound {
		t.Errorf("GET /mcp without a link of that code: %d, want the redirect's 404", r.StatusCode)
	}
	testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/mcp-menu","code":"mcp"}`), 201)
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		r := fetchRaw(t, method, srv.URL+"/mcp")
		if r.StatusCode != http.StatusFound || r.Header.Get("Location") != "https://example.com/mcp-menu" {
			t.Errorf("%s /mcp: %d to %q, want 302 to the link's target", method, r.StatusCode, r.Header.Get("Location"))
		}
	}
	// Other methods are a 405 problem, as on the API, listing the allowed ones.
	put := srv.Do(t, "PUT", "/mcp", token, `{}`)
	testkit.Problem(t, put, http.StatusMethodNotAllowed, "method-not-allowed")
	if allow := put.Header.Get("Allow"); !strings.Contains(allow, "POST") || !strings.Contains(allow, "GET") {
		t.Errorf("PUT /mcp: Allow %q, want POST and GET among them", allow)
	}
	if r := fetchRaw(t, "PUT", srv.URL+"/docs"); r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") == "" || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Errorf("PUT /docs: %d, Allow %q, %s; want an HTML 405 with Allow", r.StatusCode, r.Header.Get("Allow"), r.Header.Get("Content-Type"))
	}
	// The MCP endpoint is still there for MCP requests: unauthenticated, a
	// 401 with the challenge; a GET asking for an event stream is MCP's too.
	for _, tc := range []struct{ method, accept string }{
		{http.MethodPost, "application/json, text/event-stream"},
		{http.MethodGet, "text/event-stream"},
	} {
		r := fetchRaw(t, tc.method, srv.URL+"/mcp", "Accept", tc.accept)
		if r.StatusCode != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s /mcp (Accept %s) without a token: %d %q, want 401 with WWW-Authenticate", tc.method, tc.accept, r.StatusCode, r.Header.Get("WWW-Authenticate"))
		}
	}
}
