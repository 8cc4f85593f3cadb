package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/testkit"
)

// The attack of a member on an admin's webhooks, step by step: a key that
// holds every scope (minted while its owner was an admin, or before roles
// bound keys) acts as its owner now, so each step is 403 forbidden naming
// the role, and nothing changed.
func TestMemberCannotTakeOverAdminsWebhooks(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	ctx := context.Background()
	admin := testkit.NewTenant(t, srv.Pool)
	member := srv.AddMember(t, admin, account.RoleAdmin)
	_, memberKey := srv.UserAPIKey(t, member)
	adminKey := srv.APIKey(t, admin.WorkspaceID)
	hook := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/webhooks", adminKey, `{"url":"http://127.0.0.1:9/admin","events":["scan.created"]}`), 201)
	hookID := hook["id"].(string)
	dom := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/domains", adminKey, `{"hostname":"go.roles-`+strings.ToLower(hookID[4:12])+`.example"}`), 201)

	// While an admin, the key reads the webhooks: the demotion is what
	// takes it away, on the very next request.
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/webhooks", memberKey, ""), 200)
	if _, err := srv.App.Accounts.SetRole(ctx, admin.WorkspaceID, member.UserID, account.RoleMember); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct{ method, path, body string }{
		{"GET", "/api/v1/webhooks", ""},
		{"POST", "/api/v1/webhooks/" + hookID + "/rotate-secret", ""},
		{"PATCH", "/api/v1/webhooks/" + hookID, `{"url":"https://attacker.example/h"}`},
		{"PATCH", "/api/v1/domains/" + dom["id"].(string), `{"root_url":"https://evil.example/"}`},
	} {
		p := testkit.Problem(t, srv.Do(t, step.method, step.path, memberKey, step.body), http.StatusForbidden, "forbidden")
		if !strings.Contains(p["detail"].(string), "admin role") {
			t.Errorf("%s %s: detail %q does not name the role", step.method, step.path, p["detail"])
		}
	}
	after := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/webhooks/"+hookID, adminKey, ""), 200)
	if after["url"] != "http://127.0.0.1:9/admin" {
		t.Errorf("the webhook changed: %v", after)
	}
	if d := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/domains/"+dom["id"].(string), adminKey, ""), 200); d["root_url"] != nil {
		t.Errorf("the domain changed: %v", d)
	}
	// What a member may do, the key still does; and it says what it may.
	testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", memberKey, `{"target_url":"https://example.com/ok"}`), 201)
	ws := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", memberKey, ""), 200)
	for _, s := range ws["scopes"].([]any) {
		if !scope.RoleMember.Permits(scope.Scope(s.(string))) {
			t.Errorf("GET /workspace lists %s for a member's key", s)
		}
	}
	// Promoted again, the key has its scopes back; removed, it stops.
	if _, err := srv.App.Accounts.SetRole(ctx, admin.WorkspaceID, member.UserID, account.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/webhooks", memberKey, ""), 200)
	if _, _, err := srv.App.Accounts.RemoveMember(ctx, admin.WorkspaceID, member.UserID); err != nil {
		t.Fatal(err)
	}
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/links", memberKey, ""), http.StatusUnauthorized, "unauthorized")
}

// A credential whose owner's account is gone acts as nobody — never as the
// operator's admin, which a NULL owner would otherwise look like.
func TestCredentialOfADeletedOwnerActsAsNobody(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	ctx := context.Background()
	admin := testkit.NewTenant(t, srv.Pool)
	member := srv.AddMember(t, admin, account.RoleMember)
	key, token := srv.UserAPIKey(t, member, "links:read")
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/links", token, ""), 200)
	// As if the user row went without the revocation that account
	// deletion makes: the key is left unrevoked with no owner.
	if _, err := srv.Pool.Exec(ctx, "UPDATE api_keys SET created_by = NULL WHERE id = $1", key.ID); err != nil {
		t.Fatal(err)
	}
	srv.App.Keys.Invalidate(key.PublicID)
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/links", token, ""), http.StatusUnauthorized, "unauthorized")

	// The same for a client-credentials client.
	cl, secret, err := srv.App.OAuth.CreateClient(ctx, oauth.CreateInput{GrantType: oauth.GrantClientCredentials, WorkspaceID: &admin.WorkspaceID, CreatedBy: &admin.UserID, Name: "c", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := srv.App.OAuth.ClientCredentials(ctx, oauth.ClientAuth{ClientID: cl.ExternalID(), Secret: secret, HasSecret: true}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/links", tok.AccessToken, ""), 200)
	if _, err := srv.Pool.Exec(ctx, "UPDATE oauth_clients SET created_by = NULL WHERE id = $1", cl.ID); err != nil {
		t.Fatal(err)
	}
	srv.App.OAuth.Invalidate("c:" + cl.ID.String())
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/links", tok.AccessToken, ""), http.StatusUnauthorized, "unauthorized")
}

// A demotion made through one instance reaches another that has the role
// cached: its NOTIFY drops the role there too, and the key loses the admin
// scopes without a restart.
func TestDemotionReachesEveryInstance(t *testing.T) {
	t.Parallel()
	one := testkit.StartServer(t)
	two := testkit.StartServer(t, testkit.WithPool(one.Pool))
	ctx := context.Background()
	admin := testkit.NewTenant(t, one.Pool)
	member := one.AddMember(t, admin, account.RoleAdmin)
	_, key := one.UserAPIKey(t, member, "webhooks:read")
	// Both instances have verified the key and cached the admin role.
	testkit.JSON(t, one.Do(t, "GET", "/api/v1/webhooks", key, ""), 200)
	testkit.JSON(t, two.Do(t, "GET", "/api/v1/webhooks", key, ""), 200)
	if _, err := one.App.Accounts.SetRole(ctx, admin.WorkspaceID, member.UserID, account.RoleMember); err != nil {
		t.Fatal(err)
	}
	testkit.Problem(t, one.Do(t, "GET", "/api/v1/webhooks", key, ""), http.StatusForbidden, "forbidden")
	testkit.Eventually(t, 10*time.Second, func() bool {
		resp := two.Do(t, "GET", "/api/v1/webhooks", key, "")
		resp.Body.Close()
		return resp.StatusCode == http.StatusForbidden
	}, "the other instance refuses the demoted admin's key")
}

// An audit entry made through a user's key names the key, its owner and
// the owner's address: who did it, whichever credential they used.
func TestAuditEntryNamesTheKeysOwner(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	admin := testkit.NewTenant(t, srv.Pool)
	key, token, err := srv.App.Keys.Create(context.Background(), admin.WorkspaceID, &admin.UserID, apikey.CreateInput{Name: "hooks", Scopes: []string{"webhooks:write", "audit:read"}})
	if err != nil {
		t.Fatal(err)
	}
	testkit.JSON(t, srv.Do(t, "POST", "/api/v1/webhooks", token, `{"url":"http://127.0.0.1:9/h","events":["link.created"]}`), 201)
	list := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/audit-events?action=webhook.created", token, ""), 200)
	data := list["data"].([]any)
	if len(data) != 1 {
		t.Fatalf("entries %v", data)
	}
	actor := data[0].(map[string]any)["actor"].(map[string]any)
	if actor["type"] != "api_key" || actor["id"] != key.ExternalID() || actor["email"] != admin.Email ||
		actor["user_id"] != id.Format(id.User, admin.UserID) {
		t.Errorf("actor %v", actor)
	}
}
