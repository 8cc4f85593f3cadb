package web_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/testkit"
)

// partnerConfig is x/oauth2's view of a public partner client.
func partnerConfig(srv *testkit.Server, c *oauth.Client, redirect string) *oauth2.Config {
	return &oauth2.Config{
		ClientID: c.ExternalID(), RedirectURL: redirect, Scopes: []string{"links:read", "analytics:read"},
		Endpoint: oauth2.Endpoint{AuthURL: srv.URL + "/oauth/authorize", TokenURL: srv.URL + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams},
	}
}

// authorizeApp has the signed-in b allow the partner c in workspace ws
// through the consent form, and redeems the code as the partner would.
func authorizeApp(t *testing.T, b *browser, conf *oauth2.Config, ws string) *oauth2.Token {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	form := url.Values{
		"response_type": {"code"}, "client_id": {conf.ClientID}, "redirect_uri": {conf.RedirectURL},
		"scope": {strings.Join(conf.Scopes, " ")}, "state": {"st"}, "code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)},
		"code_challenge_method": {"S256"}, "workspace": {ws}, "decision": {"allow"},
	}
	p := b.post("/oauth/authorize", form)
	loc, _ := url.Parse(p.location)
	if p.status != http.StatusSeeOther || loc == nil || loc.Query().Get("code") == "" {
		t.Fatalf("consent: %d %q %s", p.status, p.location, excerpt(p.body))
	}
	tok, err := conf.Exchange(context.Background(), loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

var grantIDRE = regexp.MustCompile(`data-grant-id="(grt_[0-9a-z]+)"`)

// grantIDs are the grants listed on the page, in order.
func grantIDs(body string) []string {
	var ids []string
	for _, m := range grantIDRE.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// lastUsedAt reads a grant's last_used_at straight from the database.
func lastUsedAt(t *testing.T, srv *testkit.Server, grant string) time.Time {
	t.Helper()
	grantID, ok := id.Parse(id.OAuthGrant, grant)
	if !ok {
		t.Fatalf("grant id %q", grant)
	}
	var at time.Time
	if err := srv.Pool.QueryRow(context.Background(), `SELECT last_used_at FROM oauth_grants WHERE id = $1`, grantID).Scan(&at); err != nil {
		t.Fatal(err)
	}
	return at
}

// setLastUsed moves a grant's last use back to a fixed past moment.
func setLastUsed(t *testing.T, srv *testkit.Server, grant string, at time.Time) {
	t.Helper()
	grantID, _ := id.Parse(id.OAuthGrant, grant)
	if _, err := srv.Pool.Exec(context.Background(), `UPDATE oauth_grants SET last_used_at = $2 WHERE id = $1`, grantID, at); err != nil {
		t.Fatal(err)
	}
}

// TestAuthorizedApps: Settings → Authorized apps lists the grants the
// viewer gave (and nobody else's), records their use (access token,
// refresh), and revokes one so its refresh and access tokens stop at once;
// another user's grant id is a 404 that revokes nothing.
func TestAuthorizedApps(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	alice := testkit.NewTenant(t, srv.Pool)
	bob := testkit.NewTenant(t, srv.Pool)
	c := newPartner(t, srv, partnerRedirect, "links:read", "analytics:read")
	conf := partnerConfig(srv, c, partnerRedirect)
	ba, bb := newBrowser(t, srv), newBrowser(t, srv)
	ba.mustSignIn(alice.Email, alice.Password)
	bb.mustSignIn(bob.Email, bob.Password)

	// Empty: a page that says what will appear, reachable from the
	// settings navigation.
	p := ba.get("/settings/apps")
	if p.status != 200 || !hasTestID(p.body, "apps-empty") || hasTestID(p.body, "apps-table") {
		t.Fatalf("empty page: %d %s", p.status, excerpt(p.body))
	}
	if keys := ba.get("/w/" + alice.WorkspaceExternalID() + "/settings/api-keys"); !strings.Contains(keys.body, `href="/settings/apps"`) {
		t.Errorf("the settings navigation does not link to Authorized apps: %s", excerpt(keys.body))
	}

	if acct := ba.get("/account"); !hasTestID(acct.body, "account-apps") || !strings.Contains(acct.body, `href="/settings/apps"`) {
		t.Errorf("the account page does not link to Authorized apps: %s", excerpt(acct.body))
	}
	// Switching workspace from the page stays on it (it covers them all).
	if sw := ba.post("/w/switch", url.Values{"workspace": {alice.WorkspaceExternalID()}, "section": {"apps"}}); sw.status != http.StatusSeeOther || sw.location != "/settings/apps" {
		t.Errorf("switch from Authorized apps: %d %q", sw.status, sw.location)
	}

	aliceTok := authorizeApp(t, ba, conf, alice.WorkspaceExternalID())
	bobTok := authorizeApp(t, bb, conf, bob.WorkspaceExternalID())

	p = ba.get("/settings/apps")
	ids := grantIDs(p.body)
	if p.status != 200 || len(ids) != 1 || textOf(t, p.body, "app-name") != "Acme Analytics" {
		t.Fatalf("alice's apps: %d %v %s", p.status, ids, excerpt(p.body))
	}
	aliceGrant := ids[0]
	wsName := textOf(t, p.body, "app-workspace")
	if wsName == "" || !strings.Contains(p.body, "Read links and QR codes") || !strings.Contains(p.body, "Read scans and analytics") ||
		strings.Contains(p.body, "Create, re-point") || !strings.Contains(textOf(t, p.body, "app-last-used"), "UTC") {
		t.Errorf("alice's row: %s", excerpt(p.body))
	}
	// An operator's partner is not marked; a self-registered app (RFC 7591) is.
	if hasTestID(p.body, "app-self-registered") {
		t.Errorf("an operator's partner is marked self-registered: %s", excerpt(p.body))
	}
	if _, err := srv.Pool.Exec(context.Background(), `UPDATE oauth_clients SET dynamic = true WHERE id = $1`, c.ID); err != nil {
		t.Fatal(err)
	}
	if marked := ba.get("/settings/apps"); !hasTestID(marked.body, "app-self-registered") {
		t.Errorf("a self-registered app is not marked unverified: %s", excerpt(marked.body))
	}
	if _, err := srv.Pool.Exec(context.Background(), `UPDATE oauth_clients SET dynamic = false WHERE id = $1`, c.ID); err != nil {
		t.Fatal(err)
	}
	bobPage := bb.get("/settings/apps")
	bobIDs := grantIDs(bobPage.body)
	if len(bobIDs) != 1 || bobIDs[0] == aliceGrant {
		t.Fatalf("bob's apps: %v (alice's %s)", bobIDs, aliceGrant)
	}
	bobGrant := bobIDs[0]
	if strings.Contains(p.body, bobGrant) || strings.Contains(bobPage.body, aliceGrant) {
		t.Fatal("a user sees another user's grant")
	}

	t.Run("last used: access token", func(t *testing.T) {
		old := time.Date(2020, 1, 2, 3, 4, 0, 0, time.UTC)
		setLastUsed(t, srv, aliceGrant, old)
		if got := textOf(t, ba.get("/settings/apps").body, "app-last-used"); !strings.Contains(got, "2 Jan 2020, 03:04 UTC") {
			t.Fatalf("last used on the page: %q", got)
		}
		testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", aliceTok.AccessToken, ""), 200)
		testkit.Eventually(t, 10*time.Second, func() bool { return lastUsedAt(t, srv, aliceGrant).After(old) }, "an access token's use recorded as the grant's last use")
	})

	t.Run("last used: refresh", func(t *testing.T) {
		old := time.Date(2021, 5, 6, 7, 8, 0, 0, time.UTC)
		setLastUsed(t, srv, aliceGrant, old)
		fresh, err := conf.TokenSource(context.Background(), &oauth2.Token{RefreshToken: aliceTok.RefreshToken}).Token()
		if err != nil {
			t.Fatal(err)
		}
		aliceTok = fresh
		if at := lastUsedAt(t, srv, aliceGrant); !at.After(old) {
			t.Fatalf("last_used_at %v after a refresh", at)
		}
		if got := textOf(t, ba.get("/settings/apps").body, "app-last-used"); strings.Contains(got, "2021") {
			t.Errorf("last used on the page after a refresh: %q", got)
		}
	})

	t.Run("another user's grant is a 404", func(t *testing.T) {
		for _, form := range []url.Values{{}, {"confirmed": {"yes"}}} {
			p := ba.post("/settings/apps/"+bobGrant+"/revoke", form)
			if p.status != http.StatusNotFound {
				t.Errorf("alice revokes bob's grant (%v): %d %s", form, p.status, excerpt(p.body))
			}
		}
		for _, bad := range []string{"grt_nope", "cli_" + strings.TrimPrefix(bobGrant, "grt_"), "grt_00000000000000000000000000"} {
			if p := ba.post("/settings/apps/"+bad+"/revoke", url.Values{"confirmed": {"yes"}}); p.status != http.StatusNotFound {
				t.Errorf("revoke %s: %d", bad, p.status)
			}
		}
		// Bob's app still works, both ways.
		testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", bobTok.AccessToken, ""), 200)
		fresh, err := conf.TokenSource(context.Background(), &oauth2.Token{RefreshToken: bobTok.RefreshToken}).Token()
		if err != nil {
			t.Fatalf("bob's refresh after alice's attempt: %v", err)
		}
		bobTok = fresh
		if ids := grantIDs(bb.get("/settings/apps").body); len(ids) != 1 || ids[0] != bobGrant {
			t.Errorf("bob's apps after alice's attempt: %v", ids)
		}
	})

	t.Run("revoke", func(t *testing.T) {
		// Without JavaScript's confirm(), the post asks first.
		p := ba.post("/settings/apps/"+aliceGrant+"/revoke", url.Values{})
		if p.status != 200 || !hasTestID(p.body, "confirm-page") || !strings.Contains(p.body, "Acme Analytics") {
			t.Fatalf("unconfirmed revoke: %d %s", p.status, excerpt(p.body))
		}
		testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", aliceTok.AccessToken, ""), 200)
		// A cross-site post is refused.
		if p := ba.post("/settings/apps/"+aliceGrant+"/revoke", url.Values{"confirmed": {"yes"}}, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"); p.status != http.StatusForbidden {
			t.Errorf("cross-site revoke: %d", p.status)
		}
		testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", aliceTok.AccessToken, ""), 200)

		p = ba.post("/settings/apps/"+aliceGrant+"/revoke", url.Values{"confirmed": {"yes"}})
		if p.status != http.StatusSeeOther || p.location != "/settings/apps" {
			t.Fatalf("revoke: %d %q %s", p.status, p.location, excerpt(p.body))
		}
		page := ba.follow(p)
		if !hasTestID(page.body, "flash-ok") || !hasTestID(page.body, "apps-empty") {
			t.Errorf("after revoking: %s", excerpt(page.body))
		}
		// The access token stops at once, and so does the refresh token.
		testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", aliceTok.AccessToken, ""), 401, "unauthorized")
		_, err := conf.TokenSource(context.Background(), &oauth2.Token{RefreshToken: aliceTok.RefreshToken}).Token()
		var re *oauth2.RetrieveError
		if !asRetrieveError(err, &re) || re.ErrorCode != "invalid_grant" {
			t.Errorf("refresh after revoking: %v", err)
		}
		// Revoking again: 404, nothing left to revoke.
		if p := ba.post("/settings/apps/"+aliceGrant+"/revoke", url.Values{"confirmed": {"yes"}}); p.status != http.StatusNotFound {
			t.Errorf("second revoke: %d", p.status)
		}
		// Bob is untouched.
		testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", bobTok.AccessToken, ""), 200)
	})

	t.Run("signed out", func(t *testing.T) {
		anon := newBrowser(t, srv)
		if p := anon.get("/settings/apps"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/login") {
			t.Errorf("signed out: %d %q", p.status, p.location)
		}
		if p := anon.post("/settings/apps/"+bobGrant+"/revoke", url.Values{"confirmed": {"yes"}}); p.status == 200 || p.status == http.StatusSeeOther && p.location == "/settings/apps" {
			t.Errorf("signed-out revoke: %d %q", p.status, p.location)
		}
		testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", bobTok.AccessToken, ""), 200)
	})
}

func asRetrieveError(err error, target **oauth2.RetrieveError) bool {
	return err != nil && errors.As(err, target)
}

// TestAuthorizedAppsWithoutWorkspace: a user who belongs to no workspace
// still has the page, with only its own entry in the settings navigation
// (no workspace links that would lead nowhere).
func TestAuthorizedAppsWithoutWorkspace(t *testing.T) {
	t.Parallel()
	srv, tn, b, _ := signedIn(t)
	if _, err := srv.Pool.Exec(context.Background(), `DELETE FROM memberships WHERE user_id = $1`, tn.UserID); err != nil {
		t.Fatal(err)
	}
	p := b.get("/settings/apps")
	if p.status != 200 || !hasTestID(p.body, "apps-empty") || !hasTestID(p.body, "nav-apps") || hasTestID(p.body, "nav-workspace") || strings.Contains(p.body, `href="/w//`) {
		t.Fatalf("without a workspace: %d %s", p.status, excerpt(p.body))
	}
}
