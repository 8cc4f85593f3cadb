package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestCrossSitePostsRefused(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	form := url.Values{"email": {tn.Email}, "password": {tn.Password}}

	for name, header := range map[string][]string{
		"Sec-Fetch-Site cross-site":           {"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"},
		"Sec-Fetch-Site same-site":            {"Sec-Fetch-Site", "same-site", "Origin", "https://sub.evil.example"},
		"old browser: Origin of another host": {"Sec-Fetch-Site", "", "Origin", "https://evil.example"},
	} {
		b := newBrowser(t, srv)
		p := b.post("/login", form, header...)
		if p.status != http.StatusForbidden || !hasTestID(p.body, "error-page") {
			t.Errorf("%s: status %d, want the 403 page", name, p.status)
		}
		if b.sessionCookie() != "" {
			t.Errorf("%s: a session was started", name)
		}
	}

	// A signed-in user's key cannot be revoked from another site.
	b := newBrowser(t, srv)
	b.mustSignIn(tn.Email, tn.Password)
	key, token, err := srv.App.Keys.Create(context.Background(), tn.WorkspaceID, &tn.UserID, apikey.CreateInput{Name: "k", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	revoke := "/w/" + tn.WorkspaceExternalID() + "/settings/api-keys/" + key.ExternalID() + "/revoke"
	if p := b.post(revoke, nil, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"); p.status != http.StatusForbidden {
		t.Fatalf("cross-site revoke: status %d, want 403", p.status)
	}
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", token, ""), 200)
	// Sign-out is refused cross-site too, and the session survives.
	if p := b.post("/logout", nil, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"); p.status != http.StatusForbidden {
		t.Fatalf("cross-site sign-out: status %d, want 403", p.status)
	}
	if p := b.get("/w/" + tn.WorkspaceExternalID() + "/settings/api-keys"); p.status != http.StatusOK {
		t.Fatalf("session ended by a cross-site post: %d", p.status)
	}

	// The same post from linkqr's own page goes through.
	p := b.post(revoke, confirmed)
	if p.status != http.StatusSeeOther || !strings.HasSuffix(p.location, "/settings/api-keys") {
		t.Fatalf("same-origin revoke: status %d → %q", p.status, p.location)
	}
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", token, ""), 401, "unauthorized")
}
