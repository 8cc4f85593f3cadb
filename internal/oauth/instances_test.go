package oauth_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// TestClientRevocationReachesEveryInstance: a token verified (and its
// client cached) on instance b fails there soon after the client is
// revoked on instance a (NOTIFY), and the instances share the signing keys.
func TestClientRevocationReachesEveryInstance(t *testing.T) {
	t.Parallel()
	a := testkit.StartServer(t)
	// Instances of one deployment share LINKQR_BASE_URL: the issuer.
	b := testkit.StartServer(t, testkit.WithPool(a.Pool), testkit.WithEnv("LINKQR_BASE_URL", a.URL))
	tn := testkit.NewTenant(t, a.Pool)
	c, secret := ccClient(t, a, tn.WorkspaceID, "links:read")
	tr := postForm(t, a, "/oauth/token", url.Values{"grant_type": {"client_credentials"}}, c.ExternalID(), secret)
	if tr.status != 200 {
		t.Fatalf("%d %v", tr.status, tr.body)
	}
	tok := tr.body["access_token"].(string)
	testkit.JSON(t, b.Do(t, "GET", "/api/v1/workspace", tok, ""), 200) // b verifies a's token
	if err := a.App.OAuth.RevokeClient(context.Background(), tn.WorkspaceID, c.ID); err != nil {
		t.Fatal(err)
	}
	testkit.Problem(t, a.Do(t, "GET", "/api/v1/workspace", tok, ""), 401, "unauthorized")
	wait.Until(t, 2*time.Second, func() (bool, string) {
		resp := b.Do(t, "GET", "/api/v1/workspace", tok, "")
		resp.Body.Close()
		return resp.StatusCode == 401, fmt.Sprintf("instance b still accepts the revoked client's token (status %d)", resp.StatusCode)
	})
}

// TestClientAllowlistAndRateLimitApplyToItsTokens: the client's settings
// are the token's, like an API key's.
func TestClientAllowlistAndRateLimitApplyToItsTokens(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	limit := 2
	c, secret, err := srv.App.OAuth.CreateClient(context.Background(), oauth.CreateInput{
		GrantType: oauth.GrantClientCredentials, WorkspaceID: &tn.WorkspaceID, Name: "c", Scopes: []string{"links:read"},
		RateLimitPerMinute: &limit, IPAllowlist: []string{"203.0.113.0/24"},
	})
	if err != nil {
		t.Fatal(err)
	}
	tr := postForm(t, srv, "/oauth/token", url.Values{"grant_type": {"client_credentials"}}, c.ExternalID(), secret)
	tok := tr.body["access_token"].(string)
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", tok, ""), 403, "ip-not-allowed")

	c2, s2, err := srv.App.OAuth.CreateClient(context.Background(), oauth.CreateInput{
		GrantType: oauth.GrantClientCredentials, WorkspaceID: &tn.WorkspaceID, Name: "c2", Scopes: []string{"links:read"}, RateLimitPerMinute: &limit,
	})
	if err != nil {
		t.Fatal(err)
	}
	tr = postForm(t, srv, "/oauth/token", url.Values{"grant_type": {"client_credentials"}}, c2.ExternalID(), s2)
	tok = tr.body["access_token"].(string)
	for range 2 {
		resp := srv.Do(t, "GET", "/api/v1/workspace", tok, "")
		if resp.Header.Get("RateLimit-Limit") != "2" {
			t.Errorf("RateLimit-Limit %q", resp.Header.Get("RateLimit-Limit"))
		}
		testkit.JSON(t, resp, 200)
	}
	resp := srv.Do(t, "GET", "/api/v1/workspace", tok, "")
	if resp.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	testkit.Problem(t, resp, 429, "rate-limited")
}

// TestRemovingAMemberRevokesTheirClientsAndGrants: like their API keys,
// in the same transaction, effective on the next request.
func TestRemovingAMemberRevokesTheirClientsAndGrants(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	ctx := context.Background()
	admin, member := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	inv, err := srv.App.Accounts.Invite(ctx, admin.WorkspaceID, &admin.UserID, member.Email, "admin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.App.Accounts.AcceptInvitation(ctx, member.UserID, inv.ID); err != nil {
		t.Fatal(err)
	}
	// A client the member created, and one the admin did.
	mine, mineSecret, err := srv.App.OAuth.CreateClient(ctx, oauth.CreateInput{GrantType: oauth.GrantClientCredentials, WorkspaceID: &admin.WorkspaceID, CreatedBy: &member.UserID, Name: "m", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	theirs, theirSecret, err := srv.App.OAuth.CreateClient(ctx, oauth.CreateInput{GrantType: oauth.GrantClientCredentials, WorkspaceID: &admin.WorkspaceID, CreatedBy: &admin.UserID, Name: "a", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	token := func(id, secret string) string {
		tr := postForm(t, srv, "/oauth/token", url.Values{"grant_type": {"client_credentials"}}, id, secret)
		if tr.status != 200 {
			t.Fatalf("%d %v", tr.status, tr.body)
		}
		return tr.body["access_token"].(string)
	}
	mineTok, theirTok := token(mine.ExternalID(), mineSecret), token(theirs.ExternalID(), theirSecret)
	// A partner grant the member gave for the admin's workspace.
	p, psecret := partner(t, srv, false, redirect, "links:read")
	v, ch := pkce()
	code, err := srv.App.OAuth.IssueCode(ctx, oauth.CodeRequest{Client: p, UserID: member.UserID, WorkspaceID: admin.WorkspaceID, RedirectURI: redirect, Scopes: p.Scopes, CodeChallenge: ch})
	if err != nil {
		t.Fatal(err)
	}
	tr := postForm(t, srv, "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "code_verifier": {v}}, p.ExternalID(), psecret)
	if tr.status != 200 {
		t.Fatalf("%d %v", tr.status, tr.body)
	}
	partnerTok, refresh := tr.body["access_token"].(string), tr.body["refresh_token"].(string)
	for _, tok := range []string{mineTok, theirTok, partnerTok} {
		testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", tok, ""), 200)
	}

	if _, _, err := srv.App.Accounts.RemoveMember(ctx, admin.WorkspaceID, member.UserID); err != nil {
		t.Fatal(err)
	}
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", mineTok, ""), 401, "unauthorized")
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", partnerTok, ""), 401, "unauthorized")
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", theirTok, ""), 200)
	postForm(t, srv, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}, p.ExternalID(), psecret).wantError(t, 400, "invalid_grant")
}
