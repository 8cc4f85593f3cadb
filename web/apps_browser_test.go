package web_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/testkit"
)

// TestBrowserAuthorizedApps walks Settings → Authorized apps in Chromium:
// the user authorizes two partner apps (one per workspace) through sign-in
// and the consent page, finds them from the settings navigation, revokes
// one at 1280 px through the confirm() dialog and the other at 390 px with
// JavaScript off (through the confirmation page); each app's token gets
// 401 right after. Every page is checked for overflow at 390 and 1280 px.
func TestBrowserAuthorizedApps(t *testing.T) {
	t.Parallel()
	ctx := chromiumUser(t)
	srv := testkit.StartServer(t)
	p := &pilot{t: t, ctx: ctx, srv: srv, js: true}
	tn := testkit.NewTenant(t, srv.Pool)
	second, err := srv.App.Accounts.NewWorkspace(context.Background(), tn.UserID, "Second Shop")
	if err != nil {
		t.Fatal(err)
	}
	dlg := answerDialogs(ctx)
	dlg.accept.Store(true)

	got := make(chan url.Values, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" { // the browser also asks for /favicon.ico
			http.NotFound(w, r)
			return
		}
		select {
		case got <- r.URL.Query():
		default:
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>Partner</title><p data-testid="partner-done">Connected</p>`))
	}))
	t.Cleanup(cb.Close)
	redirect := cb.URL + "/callback"

	// authorize runs the partner's side and the person's consent; signIn
	// is true the first time (the authorization starts signed out).
	authorize := func(name string, scopes []string, ws string, signIn bool) *oauth2.Token {
		t.Helper()
		c, _, err := srv.App.OAuth.CreateClient(context.Background(), oauth.CreateInput{
			GrantType: oauth.GrantAuthorizationCode, Name: name, Scopes: scopes, RedirectURIs: []string{redirect}, Public: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		conf := partnerConfig(srv, c, redirect)
		conf.Scopes = scopes
		verifier, state := oauth2.GenerateVerifier(), rand.Text()
		p.run(chromedp.Navigate(conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))))
		if signIn {
			p.run(chromedp.WaitVisible(css("signin-page")), chromedp.SendKeys(css("signin-email"), tn.Email), chromedp.SendKeys(css("signin-password"), tn.Password))
			p.submit(css("signin-submit"), "consent-page")
		}
		p.run(chromedp.WaitVisible(css("consent-page")), chromedp.SetValue(css("consent-workspace"), ws))
		p.submit(css("consent-allow"), "partner-done")
		q := <-got
		if q.Get("state") != state {
			t.Fatalf("callback %v", q)
		}
		tok, err := conf.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	acme := authorize("Acme Analytics", []string{"links:read", "analytics:read"}, tn.WorkspaceExternalID(), true)
	sheets := authorize("Sheets Sync", []string{"links:read", "links:write"}, second.ExternalID(), false)

	// From any settings page, the navigation leads to the list.
	p.run(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/w/"+tn.WorkspaceExternalID()+"/settings/api-keys"), chromedp.WaitVisible(css("nav-apps")))
	p.submit(css("nav-apps"), "apps-table")
	if n := p.eval(`String(document.querySelectorAll('[data-testid="app-row"]').length)`); n != "2" {
		t.Fatalf("%s rows, want 2", n)
	}
	rows := p.eval(`[...document.querySelectorAll('[data-testid="app-row"]')].map(r => r.innerText.replace(/\s+/g, " ")).join(" | ")`)
	for _, want := range []string{"Acme Analytics", "Sheets Sync", "Second Shop", "Create, re-point and delete links", "Read scans and analytics", "Last used"} {
		if !strings.Contains(rows, want) {
			t.Errorf("the list %q lacks %q", rows, want)
		}
	}
	p.look("authorized-apps")

	// 1280 px, JavaScript on: the confirm() dialog, then the flash.
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", acme.AccessToken, ""), 200)
	acmeRow := `[data-testid="app-row"][data-grant-id="` + p.eval(`[...document.querySelectorAll('[data-testid="app-row"]')].find(r => r.innerText.includes("Acme Analytics")).dataset.grantId`) + `"]`
	p.submit(chromedp.CSS(acmeRow+` [data-testid="revoke-app"]`), "flash-ok")
	if n := dlg.seen.Load(); n != 1 {
		t.Errorf("%d confirmation dialogs, want 1", n)
	}
	if msg, _ := dlg.last.Load().(string); !strings.Contains(msg, "Acme Analytics") {
		t.Errorf("confirmation %q", msg)
	}
	if rows := p.eval(`document.querySelector('[data-testid="apps-table"]').innerText`); strings.Contains(rows, "Acme Analytics") || !strings.Contains(rows, "Sheets Sync") {
		t.Errorf("after revoking Acme: %q", rows)
	}
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", acme.AccessToken, ""), 401, "unauthorized")
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", sheets.AccessToken, ""), 200)

	// 390 px, JavaScript off: the confirmation page, then the empty list.
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	p.js = false
	p.run(chromedp.EmulateViewport(390, 844), chromedp.Navigate(srv.URL+"/settings/apps"), chromedp.WaitVisible(css("apps-table")))
	p.look("authorized-apps")
	p.run(chromedp.EmulateViewport(390, 844))
	p.submit(css("revoke-app"), "confirm-page")
	if msg := p.text2(`[data-testid="confirm-page"]`); !strings.Contains(msg, "Sheets Sync") {
		t.Errorf("confirmation page %q", msg)
	}
	p.look("authorized-apps-confirm")
	p.run(chromedp.EmulateViewport(390, 844))
	p.submit(css("confirm-submit"), "apps-empty")
	p.look("authorized-apps-empty")
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", sheets.AccessToken, ""), 401, "unauthorized")
	if n := dlg.seen.Load(); n != 1 {
		t.Errorf("%d dialogs with JavaScript off, want none more", n)
	}
}
