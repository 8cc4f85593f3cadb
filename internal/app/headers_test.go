package app_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/testkit"
)

// noRedirects is a client that returns 3xx responses instead of following.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func fetchRaw(t *testing.T, method, url string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" { // net/http sends req.Host, not a Host header
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestSecurityHeaders is finding 7 of the hardening issue: every page a
// browser renders carries a strict CSP with frame-ancestors 'none',
// X-Frame-Options and Referrer-Policy; every response, whatever its kind,
// carries nosniff; the redirect stays minimal; and HSTS is sent only when
// the base URL is https.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	token := srv.APIKey(t, tn.WorkspaceID)
	created := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/menu"}`), 201)
	code := created["code"].(string)

	pages := []struct{ name, path string }{
		{"sign-in page", "/login"},
		{"sign-up page", "/signup"},
		{"problem catalogue", "/problems"},
		{"problem page", "/problems/validation-failed"},
		{"unknown problem page (404)", "/problems/no-such-type"},
		{"404 page", "/no/such/page"},
		{"unknown link code (404)", "/NoSuchCode1"},
	}
	for _, p := range pages {
		resp := fetchRaw(t, "GET", srv.URL+p.path, "Accept", "text/html")
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: content type %q", p.name, resp.Header.Get("Content-Type"))
		}
		csp := resp.Header.Get("Content-Security-Policy")
		for _, d := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "object-src 'none'"} {
			if !strings.Contains(csp, d) {
				t.Errorf("%s: CSP %q lacks %s", p.name, csp, d)
			}
		}
		if strings.Contains(csp, "unsafe-") || strings.Contains(csp, "*") {
			t.Errorf("%s: CSP %q is not strict", p.name, csp)
		}
		checkHeaders(t, p.name, resp.Header, map[string]string{
			"X-Frame-Options":           "DENY",
			"Referrer-Policy":           "strict-origin-when-cross-origin",
			"X-Content-Type-Options":    "nosniff",
			"Strict-Transport-Security": "",
		})
	}

	// /docs keeps its own policy (stricter still: default-src 'none') and
	// gets the others.
	resp := fetchRaw(t, "GET", srv.URL+"/docs")
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-") || strings.Contains(csp, "blob:") {
		t.Errorf("/docs CSP %q", csp)
	}
	checkHeaders(t, "/docs", resp.Header, map[string]string{
		"X-Frame-Options": "DENY", "Referrer-Policy": "strict-origin-when-cross-origin", "X-Content-Type-Options": "nosniff",
	})

	// Everything else: nosniff, and none of the page headers.
	others := []struct{ name, method, path, token string }{
		{"API 200", "GET", "/api/v1/workspace", token},
		{"API 401 problem", "GET", "/api/v1/workspace", ""},
		{"API 404 problem", "GET", "/api/v1/nope", token},
		{"health", "GET", "/healthz", ""},
		{"OpenAPI document", "GET", "/openapi.json", ""},
		{"stylesheet", "GET", "/static/css/app.css", ""},
		{"script", "GET", "/static/js/app.js", ""},
		{"redirect", "GET", "/" + code, ""},
		{"redirect HEAD", "HEAD", "/" + code, ""},
	}
	for _, o := range others {
		var h []string
		if o.token != "" {
			h = []string{"Authorization", "Bearer " + o.token}
		}
		resp := fetchRaw(t, o.method, srv.URL+o.path, h...)
		if resp.StatusCode >= 500 {
			t.Errorf("%s: %d", o.name, resp.StatusCode)
		}
		checkHeaders(t, o.name, resp.Header, map[string]string{
			"X-Content-Type-Options":    "nosniff",
			"Content-Security-Policy":   "",
			"X-Frame-Options":           "",
			"Referrer-Policy":           "",
			"Strict-Transport-Security": "",
		})
	}

	// The redirect is exactly what it was, plus nosniff.
	resp = fetchRaw(t, "GET", srv.URL+"/"+code)
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "https://example.com/menu" {
		t.Fatalf("redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	for name := range resp.Header {
		switch name {
		case "Location", "Cache-Control", "X-Request-Id", "X-Content-Type-Options", "Date", "Content-Length":
		default:
			t.Errorf("redirect carries %s: %q", name, resp.Header.Get(name))
		}
	}
}

// TestHSTSOnlyWithHTTPSBaseURL: behind a TLS-terminating proxy (base URL
// https) every response tells browsers to stay on https, the redirect too.
func TestHSTSOnlyWithHTTPSBaseURL(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_BASE_URL", "https://links.example.com"))
	tn := testkit.NewTenant(t, srv.Pool)
	testkit.Link(t, srv.Pool, &testkit.LinkOpts{WorkspaceID: tn.WorkspaceID, Code: "hsts1"})
	for _, path := range []string{"/login", "/docs", "/healthz", "/api/v1/nope", "/static/css/app.css", "/hsts1"} {
		// As a TLS-terminating proxy forwards it: Host is the public name.
		resp := fetchRaw(t, "GET", srv.URL+path, "Host", "links.example.com")
		checkHeaders(t, path, resp.Header, map[string]string{
			"Strict-Transport-Security": "max-age=31536000",
			"X-Content-Type-Options":    "nosniff",
		})
	}
}

// checkHeaders compares headers with want; "" means the header must be absent.
func checkHeaders(t *testing.T, what string, h http.Header, want map[string]string) {
	t.Helper()
	for name, v := range want {
		if got := h.Values(name); (v == "" && len(got) != 0) || (v != "" && (len(got) != 1 || got[0] != v)) {
			t.Errorf("%s: %s = %q, want %q", what, name, got, v)
		}
	}
}

// TestPagesWorkUnderTheirCSP loads the UI in Chromium with a listener for
// CSP violations installed before any page script: the sign-up, links and
// API keys pages must load their stylesheet and script with no violation.
func TestPagesWorkUnderTheirCSP(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	ctx := testkit.Chromium(t)

	if _, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.__csp = [];
document.addEventListener("securitypolicyviolation", e => window.__csp.push(e.violatedDirective + " " + e.blockedURI));`,
	}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	type state struct {
		Violations []string `json:"violations"`
		Script     bool     `json:"script"`
		Styled     string   `json:"styled"`
	}
	const probe = `({violations: window.__csp, script: document.documentElement.classList.contains("js"),
		styled: getComputedStyle(document.querySelector(".topbar")).display})`
	check := func(page string) {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[state](probe))
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		if len(s.Violations) > 0 || !s.Script || s.Styled != "flex" {
			t.Errorf("%s: CSP violations %v, app.js ran %v, topbar display %q (want flex)", page, s.Violations, s.Script, s.Styled)
		}
	}
	css := func(id string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + id + `"]`) }

	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/signup"),
		chromedp.WaitVisible(css("signup-email")),
	)
	if err != nil {
		t.Fatal(err)
	}
	check("/signup")
	email, password := "csp-"+strings.ToLower(time.Now().Format("150405.000000"))+"@example.com", "correct horse battery staple"
	err = chromedp.Do(ctx,
		chromedp.SendKeys(css("signup-email"), email),
		chromedp.SendKeys(css("signup-password"), password),
		chromedp.SendKeys(css("signup-workspace"), "CSP Co"),
		chromedp.Click(css("signup-submit")),
		chromedp.WaitVisible(css("flash-ok")),
		chromedp.WaitVisible(css("nav-settings")),
	)
	if err != nil {
		t.Fatal(err)
	}
	check("the Links page after sign-up (which signs in)")
	err = chromedp.Do(ctx, chromedp.Click(css("nav-settings")), chromedp.WaitVisible(css("create-key")))
	if err != nil {
		t.Fatal(err)
	}
	check("Settings → API keys")
}
