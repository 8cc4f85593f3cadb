package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/testkit"
)

// A member's key form offers only what their role allows, and refuses an
// admin-only scope posted all the same (the attack began by ticking every
// box): the key is not minted.
func TestMemberCannotMintAdminScopes(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, member := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, admin, member, account.RoleMember)
	b := newBrowser(t, srv)
	b.mustSignIn(member.Email, member.Password)
	base := "/w/" + admin.WorkspaceExternalID() + "/settings/api-keys"

	form := b.get(base + "/new")
	for _, s := range scope.All {
		offered := hasTestID(form.body, "scope-"+string(s))
		if want := scope.RoleMember.Permits(s); offered != want {
			t.Errorf("the member's key form offers %s: %v, want %v", s, offered, want)
		}
	}
	if !hasTestID(form.body, "key-scopes-withheld") {
		t.Errorf("the form does not say which scopes are for admins")
	}

	p := b.post(base, url.Values{"name": {"everything"}, "scopes": scope.Strings(scope.All), "rate_limit_per_minute": {"600"}})
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "for admins only") {
		t.Fatalf("posting every scope as a member: %d %s", p.status, excerpt(p.body))
	}
	keys, err := srv.App.Keys.List(context.Background(), admin.WorkspaceID, &member.UserID)
	if err != nil || len(keys) != 0 {
		t.Fatalf("the refused form minted keys: %v %v", keys, err)
	}
	// What the role allows is minted as before.
	p = b.post(base, url.Values{"name": {"links"}, "scopes": {"links:read", "links:write", "domains:read"}, "rate_limit_per_minute": {"600"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("a member's key within their role: %d %s", p.status, excerpt(p.body))
	}
}

// An invitation dies with its inviter's admin role: removed by another
// admin, demoted, or their account deleted, the link they made answers 410
// and nobody joins through it.
func TestInvitationDiesWithItsInvitersRole(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		revoke func(t *testing.T, owner, inviter testkit.Tenant)
	}{
		{"inviter removed", func(t *testing.T, owner, inviter testkit.Tenant) {
			if _, _, err := srv.App.Accounts.RemoveMember(ctx, owner.WorkspaceID, inviter.UserID); err != nil {
				t.Fatal(err)
			}
		}},
		{"inviter demoted", func(t *testing.T, owner, inviter testkit.Tenant) {
			if _, err := srv.App.Accounts.SetRole(ctx, owner.WorkspaceID, inviter.UserID, account.RoleMember); err != nil {
				t.Fatal(err)
			}
		}},
		{"inviter's account deleted", func(t *testing.T, _, inviter testkit.Tenant) {
			if _, err := srv.App.Erasure.DeleteAccount(ctx, inviter.UserID); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			owner, inviter, invitee := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
			addMember(t, srv, owner, inviter, account.RoleAdmin)
			inv, err := srv.App.Accounts.Invite(ctx, owner.WorkspaceID, &inviter.UserID, invitee.Email, account.RoleAdmin)
			if err != nil {
				t.Fatal(err)
			}
			c.revoke(t, owner, inviter)

			b := newBrowser(t, srv)
			b.mustSignIn(invitee.Email, invitee.Password)
			link := path(t, inv.Link)
			if p := b.get(link); p.status != http.StatusGone {
				t.Errorf("the link after its inviter lost the role: %d", p.status)
			}
			if p := b.post(link+"/accept", nil); p.status != http.StatusGone {
				t.Errorf("accepting it: %d", p.status)
			}
			if _, err := srv.App.Accounts.AcceptInvitation(ctx, invitee.UserID, inv.ID); err == nil {
				t.Errorf("accepting it from the invitations page worked")
			}
			if _, err := srv.App.Accounts.Workspace(ctx, invitee.UserID, owner.WorkspaceID); err == nil {
				t.Fatalf("the invitee joined through a dead invitation")
			}
		})
	}
}

// An admin cannot invite anyone above their role, and a member cannot
// invite at all, whatever surface asks: the rule is in the service.
func TestInvitationsAskTheRoleTable(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	ctx := context.Background()
	owner, member := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, owner, member, account.RoleMember)
	_, err := srv.App.Accounts.Invite(ctx, owner.WorkspaceID, &member.UserID, newEmail("friend"), account.RoleMember)
	if _, ok := err.(*scope.ForbiddenError); !ok {
		t.Errorf("a member invites: %v, want a ForbiddenError", err)
	}
	b := newBrowser(t, srv)
	b.mustSignIn(member.Email, member.Password)
	p := b.post("/w/"+owner.WorkspaceExternalID()+"/settings/invitations", url.Values{"email": {newEmail("friend")}, "role": {"admin"}})
	if p.status != http.StatusForbidden {
		t.Errorf("a member's invitation form: %d", p.status)
	}
	// An operator's credential (no inviter) invites as an admin, and its
	// invitation stays good: nobody's role can lapse.
	invitee := testkit.NewTenant(t, srv.Pool)
	inv, err := srv.App.Accounts.Invite(ctx, owner.WorkspaceID, nil, invitee.Email, account.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if ws, err := srv.App.Accounts.AcceptInvitation(ctx, invitee.UserID, inv.ID); err != nil || ws.Role != account.RoleAdmin {
		t.Errorf("accepting an operator's invitation: %+v %v", ws, err)
	}
}

// The member's key form in a browser: only the member's scopes, the note
// saying which are for admins, and the page fits a phone.
func TestBrowserMemberKeyForm(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin := testkit.NewTenant(t, srv.Pool)
	member := srv.AddMember(t, admin, account.RoleMember)
	ctx := chromiumUser(t)
	p := &pilot{t: t, ctx: ctx, srv: srv, js: true}
	p.run(chromedp.Navigate(srv.URL+"/login"), chromedp.SendKeys(css("signin-email"), member.Email), chromedp.SendKeys(css("signin-password"), member.Password))
	p.submit(css("signin-submit"), "nav-email")
	p.run(chromedp.Navigate(srv.URL+"/w/"+admin.WorkspaceExternalID()+"/settings/api-keys/new"), chromedp.WaitVisible(css("key-scopes-withheld")))
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.querySelectorAll('input[name="scopes"]').length`))
	if err != nil || n != int64(len(scope.RoleMember.Allowed())) {
		t.Errorf("the member's form has %d scope boxes (%v), want %d", n, err, len(scope.RoleMember.Allowed()))
	}
	p.look("api-key-form-member")
}
