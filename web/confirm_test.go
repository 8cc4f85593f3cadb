package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/testkit"
)

// TestRevokeAndRemoveWithoutJavaScriptAskFirst: a revoke or remove posted
// without the confirmation (a browser without JavaScript never ran the
// confirm() dialog) changes nothing and answers with a confirmation page
// whose button posts the same form, confirmed.
func TestRevokeAndRemoveWithoutJavaScriptAskFirst(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, member := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, admin, member, account.RoleMember)
	ctx := context.Background()
	key, token, err := srv.App.Keys.Create(ctx, admin.WorkspaceID, &admin.UserID, apikey.CreateInput{Name: "ci", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := srv.App.Accounts.Invite(ctx, admin.WorkspaceID, &admin.UserID, newEmail("pending"), account.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, srv)
	b.mustSignIn(admin.Email, admin.Password)
	ws := "/w/" + admin.WorkspaceExternalID() + "/settings"
	for _, c := range []struct{ path, says string }{
		{ws + "/api-keys/" + key.ExternalID() + "/revoke", "“ci” stops working immediately"},
		{ws + "/invitations/" + inv.ExternalID() + "/revoke", inv.Email},
		{ws + "/members/" + userID(member) + "/remove", member.Email},
	} {
		p := b.post(c.path, url.Values{})
		if p.status != http.StatusOK || !hasTestID(p.body, "confirm-page") || !strings.Contains(p.body, c.says) ||
			!strings.Contains(p.body, `action="`+c.path+`"`) || !strings.Contains(p.body, `name="confirmed" value="yes"`) {
			t.Errorf("%s without confirmation: %d %s", c.path, p.status, excerpt(p.body))
		}
	}
	// Nothing changed.
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", token, ""), 200)
	if _, err := srv.App.Accounts.Workspace(ctx, member.UserID, admin.WorkspaceID); err != nil {
		t.Fatalf("the member was removed unconfirmed: %v", err)
	}
	if pending, _ := srv.App.Accounts.PendingInvitations(ctx, admin.WorkspaceID); len(pending) != 1 {
		t.Fatalf("the invitation was revoked unconfirmed")
	}
	// The confirmation page's button.
	if p := b.post(ws+"/api-keys/"+key.ExternalID()+"/revoke", confirmed); p.status != http.StatusSeeOther {
		t.Fatalf("confirmed revoke: %d", p.status)
	}
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", token, ""), 401, "unauthorized")
}
