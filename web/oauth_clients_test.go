package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/testkit"
)

var clientSecretRE = regexp.MustCompile(`value="(lqcs_[A-Z2-7]{52})"`)

// TestOAuthClientsSettings: an admin creates a client-credentials client,
// sees its secret exactly once, uses it at /oauth/token, and revokes it
// (its token then gets 401); members and other workspaces get 404.
func TestOAuthClientsSettings(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin := testkit.NewTenant(t, srv.Pool)
	member := testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, admin, member, account.RoleMember)
	ws := admin.WorkspaceExternalID()
	base := "/w/" + ws + "/settings/oauth-clients"

	b := newBrowser(t, srv)
	b.mustSignIn(admin.Email, admin.Password)
	if p := b.get(base); p.status != 200 || !hasTestID(p.body, "oauth-clients-empty") || !hasTestID(p.body, "nav-oauth-clients") {
		t.Fatalf("empty list: %d %s", p.status, excerpt(p.body))
	}
	// Bad input: the form again with messages, nothing created.
	p := b.post(base, url.Values{"name": {""}, "rate_limit_per_minute": {"0"}, "ip_allowlist": {"10.0.0.1/8"}})
	if p.status != http.StatusUnprocessableEntity || !hasTestID(p.body, "form-errors") || !hasTestID(p.body, "oauth-client-allowlist-error") {
		t.Fatalf("bad input: %d %s", p.status, excerpt(p.body))
	}
	if p := b.get(base); !hasTestID(p.body, "oauth-clients-empty") {
		t.Fatal("bad input created a client")
	}

	p = b.post(base, url.Values{"name": {"Billing service"}, "scopes": {"links:read"}, "rate_limit_per_minute": {"120"}})
	if p.status != http.StatusSeeOther || p.location != base+"/created" {
		t.Fatalf("create: %d %q %s", p.status, p.location, excerpt(p.body))
	}
	p = b.get(base + "/created")
	m := clientSecretRE.FindStringSubmatch(p.body)
	if p.status != 200 || m == nil {
		t.Fatalf("secret page: %d %s", p.status, excerpt(p.body))
	}
	secret := m[1]
	clientID := regexp.MustCompile(`value="(cli_[0-9a-z]{26})"`).FindStringSubmatch(p.body)[1]
	if again := b.get(base + "/created"); !hasTestID(again.body, "oauth-client-secret-gone") || strings.Contains(again.body, secret) {
		t.Fatal("the secret is shown twice")
	}
	list := b.get(base)
	if !hasTestID(list.body, "oauth-client-row") || !strings.Contains(list.body, clientID) || !strings.Contains(list.body, "120 requests/min") || strings.Contains(list.body, secret) {
		t.Fatalf("list: %s", excerpt(list.body))
	}

	tokenReq := func() (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/oauth/token", strings.NewReader("grant_type=client_credentials"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(clientID, secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = jsonDecode(resp, &body)
		tok, _ := body["access_token"].(string)
		return resp.StatusCode, tok
	}
	status, tok := tokenReq()
	if status != 200 || tok == "" {
		t.Fatalf("token: %d", status)
	}
	resp := srv.Do(t, "GET", "/api/v1/links", tok, "")
	if resp.Header.Get("RateLimit-Limit") != "120" {
		t.Errorf("RateLimit-Limit %q, want the client's 120", resp.Header.Get("RateLimit-Limit"))
	}
	testkit.JSON(t, resp, 200)

	// A member, and another workspace's admin: 404 on every page and action.
	mb := newBrowser(t, srv)
	mb.mustSignIn(member.Email, member.Password)
	if p := mb.get("/w/" + ws + "/settings/api-keys"); hasTestID(p.body, "nav-oauth-clients") {
		t.Error("a member sees the OAuth clients entry")
	}
	outsider := testkit.NewTenant(t, srv.Pool)
	ob := newBrowser(t, srv)
	ob.mustSignIn(outsider.Email, outsider.Password)
	for _, br := range []*browser{mb} {
		for _, path := range []string{base, base + "/new", base + "/created"} {
			if p := br.get(path); p.status != http.StatusNotFound {
				t.Errorf("member GET %s: %d", path, p.status)
			}
		}
		for _, path := range []string{base, base + "/" + clientID + "/revoke"} {
			if p := br.post(path, url.Values{"name": {"x"}, "scopes": {"links:read"}, "rate_limit_per_minute": {"1"}}); p.status != http.StatusNotFound {
				t.Errorf("member POST %s: %d", path, p.status)
			}
		}
	}
	// The outsider's own workspace with this workspace's client id: 404.
	if p := ob.post("/w/"+outsider.WorkspaceExternalID()+"/settings/oauth-clients/"+clientID+"/revoke", nil); p.status != http.StatusNotFound {
		t.Errorf("other workspace revoke: %d", p.status)
	}
	if p := ob.get(base); p.status != http.StatusNotFound {
		t.Errorf("outsider GET: %d", p.status)
	}
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/links", tok, ""), 200)

	// Revoke: its token fails on the next request, its secret gets no more.
	p = b.post(base+"/"+clientID+"/revoke", nil)
	if p.status != http.StatusSeeOther {
		t.Fatalf("revoke: %d", p.status)
	}
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/links", tok, ""), 401, "unauthorized")
	if status, _ := tokenReq(); status != http.StatusUnauthorized {
		t.Errorf("token after revoke: %d", status)
	}
	if p := b.post(base+"/"+clientID+"/revoke", nil); p.status != http.StatusNotFound {
		t.Errorf("second revoke: %d", p.status)
	}
}

// TestBrowserOAuthClientsPages looks at the pages in Chromium (and saves
// screenshots when LINKQR_TEST_SCREENSHOTS is set).
func TestBrowserOAuthClientsPages(t *testing.T) {
	t.Parallel()
	ctx := testkit.Chromium(t)
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	dlg := answerDialogs(ctx)
	dlg.accept.Store(true)
	run := runner(t, ctx)
	run(
		signInSteps(srv.URL, tn.Email, tn.Password),
		chromedp.Click(css("nav-settings")),
		chromedp.Click(css("nav-oauth-clients")),
		chromedp.WaitVisible(css("oauth-clients-empty")),
		chromedp.Click(css("create-oauth-client")),
		chromedp.WaitVisible(css("oauth-client-form")),
		chromedp.SendKeys(css("oauth-client-name-input"), "Billing service"),
	)
	// The reading scopes are ticked already: the first submit succeeds.
	for _, s := range []string{"links:read", "analytics:read"} {
		checked, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('[data-testid="scope-`+s+`"]').checked`))
		if err != nil || !checked {
			t.Errorf("scope %s not ticked on the empty form (%v)", s, err)
		}
	}
	run(
		chromedp.Click(css("oauth-client-submit")),
		chromedp.WaitVisible(css("new-client-secret")),
	)
	saveShot(t, ctx, "oauth-client-secret")
	secret, err := chromedp.Run(ctx, chromedp.Value(css("new-client-secret")))
	if err != nil || !strings.HasPrefix(secret, "lqcs_") {
		t.Fatalf("secret %q %v", secret, err)
	}
	run(chromedp.Click(css("oauth-client-secret-done")), chromedp.WaitVisible(css("oauth-clients-table")))
	saveShot(t, ctx, "oauth-clients")
	run(chromedp.Click(css("revoke-oauth-client")), chromedp.WaitVisible(css("oauth-clients-empty")))
	if dlg.seen.Load() != 1 {
		t.Errorf("%d confirmations, want 1", dlg.seen.Load())
	}
}

func jsonDecode(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }
