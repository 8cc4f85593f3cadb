package web_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/testkit"
)

const partnerRedirect = "https://partner.example/cb"

func newPartner(t *testing.T, srv *testkit.Server, redirect string, scopes ...string) *oauth.Client {
	t.Helper()
	c, _, err := srv.App.OAuth.CreateClient(context.Background(), oauth.CreateInput{
		GrantType: oauth.GrantAuthorizationCode, Name: "Acme Analytics", Scopes: scopes,
		RedirectURIs: []string{redirect}, Public: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func challengeOf(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func authorizeQuery(c *oauth.Client, redirect string, mod func(url.Values)) string {
	q := url.Values{
		"response_type": {"code"}, "client_id": {c.ExternalID()}, "redirect_uri": {redirect},
		"scope": {"links:read"}, "state": {"st-123"},
		"code_challenge": {challengeOf(strings.Repeat("v", 43))}, "code_challenge_method": {"S256"},
	}
	if mod != nil {
		mod(q)
	}
	return "/oauth/authorize?" + q.Encode()
}

func TestAuthorizeBadInput(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	c := newPartner(t, srv, partnerRedirect, "links:read", "analytics:read")
	b := newBrowser(t, srv)

	// client_id and redirect_uri are checked before sign-in, and never
	// lead to a redirect.
	for name, mod := range map[string]func(url.Values){
		"unknown client":          func(q url.Values) { q.Set("client_id", "cli_00000000000000000000000000") },
		"malformed client":        func(q url.Values) { q.Set("client_id", "acme") },
		"no client":               func(q url.Values) { q.Del("client_id") },
		"trailing slash":          func(q url.Values) { q.Set("redirect_uri", partnerRedirect+"/") },
		"other redirect":          func(q url.Values) { q.Set("redirect_uri", "https://evil.example/cb") },
		"no redirect":             func(q url.Values) { q.Del("redirect_uri") },
		"repeated client":         func(q url.Values) { q.Add("client_id", c.ExternalID()) },
		"unknown client, no PKCE": func(q url.Values) { q.Set("client_id", "cli_00000000000000000000000000"); q.Del("code_challenge") },
	} {
		p := b.get(authorizeQuery(c, partnerRedirect, mod))
		if p.status != http.StatusBadRequest || p.location != "" || !strings.HasPrefix(p.header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: status %d location %q", name, p.status, p.location)
		}
	}
	// A client-credentials client cannot start an authorization.
	ws := tn.WorkspaceID
	cc, _, err := srv.App.OAuth.CreateClient(context.Background(), oauth.CreateInput{GrantType: oauth.GrantClientCredentials, WorkspaceID: &ws, Name: "cc", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := b.get(authorizeQuery(cc, partnerRedirect, nil)); p.status != http.StatusBadRequest || p.location != "" {
		t.Errorf("client_credentials client: %d %q", p.status, p.location)
	}

	// Other errors go back to the redirect URI with state (RFC 6749 4.1.2.1).
	for name, c2 := range map[string]struct {
		mod  func(url.Values)
		code string
	}{
		"missing PKCE":          {func(q url.Values) { q.Del("code_challenge") }, "invalid_request"},
		"plain PKCE":            {func(q url.Values) { q.Set("code_challenge_method", "plain") }, "invalid_request"},
		"no PKCE method":        {func(q url.Values) { q.Del("code_challenge_method") }, "invalid_request"},
		"malformed challenge":   {func(q url.Values) { q.Set("code_challenge", "short") }, "invalid_request"},
		"token response type":   {func(q url.Values) { q.Set("response_type", "token") }, "unsupported_response_type"},
		"scope beyond client's": {func(q url.Values) { q.Set("scope", "links:write domains:read") }, "invalid_scope"},
		"unknown scope":         {func(q url.Values) { q.Set("scope", "everything") }, "invalid_scope"},
		"repeated scope":        {func(q url.Values) { q.Add("scope", "links:read") }, "invalid_request"},
	} {
		p := b.get(authorizeQuery(c, partnerRedirect, c2.mod))
		loc, err := url.Parse(p.location)
		if p.status != http.StatusSeeOther || err != nil || !strings.HasPrefix(p.location, partnerRedirect+"?") ||
			loc.Query().Get("error") != c2.code || loc.Query().Get("state") != "st-123" || loc.Query().Get("code") != "" {
			t.Errorf("%s: status %d location %q", name, p.status, p.location)
		}
	}

	// A valid request: sign-in first, then back to the consent page.
	if login := b.get("/login"); hasTestID(login.body, "signin-app") {
		t.Errorf("a plain sign-in page names an application: %s", excerpt(login.body))
	}
	start := authorizeQuery(c, partnerRedirect, nil)
	p := b.get(start)
	if p.status != http.StatusSeeOther || p.location != "/login" {
		t.Fatalf("not signed in: %d %q", p.status, p.location)
	}
	// The sign-in page names the application that asks.
	if login := b.get("/login"); login.status != 200 || !hasTestID(login.body, "signin-app") || !strings.Contains(login.body, "continue to <strong>Acme Analytics</strong>") {
		t.Errorf("sign-in page during an authorization request: %d %s", login.status, excerpt(login.body))
	}
	p = b.signIn(tn.Email, tn.Password)
	if p.status != http.StatusSeeOther || p.location != start {
		t.Fatalf("after sign-in: %d %q, want back to %q", p.status, p.location, start)
	}
	p = b.get(start)
	if p.status != 200 || !hasTestID(p.body, "consent-page") || !strings.Contains(p.body, "Acme Analytics") || !strings.Contains(p.body, "read links and QR codes") {
		t.Fatalf("consent page: %d %s", p.status, excerpt(p.body))
	}
	if hasTestID(p.body, "consent-self-registered") {
		t.Errorf("an operator's partner is called self-registered: %s", excerpt(p.body))
	}
	// A client asking for more than it may have (as MCP clients ask for
	// every advertised scope) is offered the intersection, not refused.
	wide := b.get(authorizeQuery(c, partnerRedirect, func(q url.Values) {
		q.Set("scope", "links:read links:write analytics:read domains:write everything")
	}))
	if wide.status != 200 || !hasTestID(wide.body, "consent-page") || !strings.Contains(wide.body, "read links and QR codes") ||
		!strings.Contains(wide.body, "read scans and analytics") || strings.Contains(wide.body, "create, re-point and delete links") ||
		!strings.Contains(wide.body, `value="links:read analytics:read"`) {
		t.Errorf("a wider scope request: %d %s", wide.status, excerpt(wide.body))
	}
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' https://partner.example;") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("consent CSP %q", csp)
	}

	form := url.Values{
		"response_type": {"code"}, "client_id": {c.ExternalID()}, "redirect_uri": {partnerRedirect}, "scope": {"links:read"},
		"state": {"st-123"}, "code_challenge": {challengeOf(strings.Repeat("v", 43))}, "code_challenge_method": {"S256"},
		"workspace": {tn.WorkspaceExternalID()},
	}
	with := func(k, v string) url.Values {
		f := url.Values{}
		for kk, vv := range form {
			f[kk] = vv
		}
		f.Set(k, v)
		return f
	}
	// Deny: access_denied with state.
	p = b.post("/oauth/authorize", with("decision", "deny"))
	if loc, _ := url.Parse(p.location); p.status != http.StatusSeeOther || loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != "st-123" {
		t.Errorf("deny: %d %q", p.status, p.location)
	}
	// Another user's workspace: refused, no code.
	other := testkit.NewTenant(t, srv.Pool)
	f := with("decision", "allow")
	f.Set("workspace", other.WorkspaceExternalID())
	if p = b.post("/oauth/authorize", f); p.status != http.StatusBadRequest || p.location != "" {
		t.Errorf("other workspace: %d %q", p.status, p.location)
	}
	// A tampered redirect URI in the form: the HTML page, no redirect.
	if p = b.post("/oauth/authorize", with("redirect_uri", "https://evil.example/cb")); p.status != http.StatusBadRequest || p.location != "" {
		t.Errorf("tampered redirect: %d %q", p.status, p.location)
	}
	// A cross-site post of the consent form is refused.
	if p = b.post("/oauth/authorize", with("decision", "allow"), "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"); p.status != http.StatusForbidden {
		t.Errorf("cross-site consent: %d", p.status)
	}
	// Allow: a code and the state.
	p = b.post("/oauth/authorize", with("decision", "allow"))
	loc, _ := url.Parse(p.location)
	if p.status != http.StatusSeeOther || loc.Query().Get("code") == "" || loc.Query().Get("state") != "st-123" {
		t.Fatalf("allow: %d %q", p.status, p.location)
	}
}

// TestBrowserPKCEFlow drives the authorization-code flow through sign-in
// and the consent page in Chromium, with golang.org/x/oauth2 as the
// partner: the token it gets acts in the workspace chosen on the page.
func TestBrowserPKCEFlow(t *testing.T) {
	t.Parallel()
	ctx := testkit.Chromium(t)
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	second, err := srv.App.Accounts.NewWorkspace(context.Background(), tn.UserID, "Second Shop")
	if err != nil {
		t.Fatal(err)
	}

	// The partner's callback, on loopback (plain http is allowed there).
	got := make(chan url.Values, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.URL.Query():
		default:
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>Partner</title><p data-testid="partner-done">Connected</p>`))
	}))
	t.Cleanup(cb.Close)
	redirect := cb.URL + "/callback"
	c := newPartner(t, srv, redirect, "links:read", "analytics:read")
	conf := &oauth2.Config{
		ClientID: c.ExternalID(), RedirectURL: redirect, Scopes: []string{"links:read", "analytics:read"},
		Endpoint: oauth2.Endpoint{AuthURL: srv.URL + "/oauth/authorize", TokenURL: srv.URL + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams},
	}
	verifier := oauth2.GenerateVerifier()
	state := rand.Text()
	run := runner(t, ctx)
	run(
		chromedp.Navigate(conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))),
		chromedp.WaitVisible(css("signin-page")),
		chromedp.SendKeys(css("signin-email"), tn.Email),
		chromedp.SendKeys(css("signin-password"), tn.Password),
		chromedp.Click(css("signin-submit")),
		chromedp.WaitVisible(css("consent-page")),
	)
	text, err := chromedp.Run(ctx, chromedp.Text(css("consent-scopes")))
	if err != nil || !strings.Contains(text, "read links and QR codes") || !strings.Contains(text, "read scans and analytics") {
		t.Fatalf("scopes on the consent page: %q %v", text, err)
	}
	saveShot(t, ctx, "oauth-consent")
	run(
		chromedp.SetValue(css("consent-workspace"), second.ExternalID()),
		chromedp.Click(css("consent-allow")),
		chromedp.WaitVisible(css("partner-done")),
	)
	var q url.Values
	select {
	case q = <-got:
	default:
		t.Fatal("the partner's callback was not called")
	}
	if q.Get("state") != state || q.Get("code") == "" {
		t.Fatalf("callback query %v", q)
	}
	tok, err := conf.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	ws := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", tok.AccessToken, ""), 200)
	if ws["id"] != second.ExternalID() || ws["name"] != "Second Shop" {
		t.Fatalf("the token acts in %v, want the chosen workspace %s", ws, second.ExternalID())
	}
	testkit.Problem(t, srv.Do(t, "POST", "/api/v1/links", tok.AccessToken, `{"target_url":"https://example.com"}`), 403, "insufficient-scope")
}
