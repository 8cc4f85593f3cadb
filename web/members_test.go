package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMemberCannotReachAdminPages(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, member := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	ws := admin.WorkspaceExternalID()
	addMember(t, srv, admin, member, account.RoleMember)
	invitation, err := srv.App.Accounts.Invite(context.Background(), admin.WorkspaceID, &admin.UserID, newEmail("invitee"), account.RoleMember)
	if err != nil {
		t.Fatal(err)
	}

	adminB := newBrowser(t, srv)
	adminB.mustSignIn(admin.Email, admin.Password)
	if p := adminB.get("/w/" + ws + "/settings/api-keys"); !hasTestID(p.body, "nav-members") {
		t.Fatal("admin does not see the Members entry")
	}

	b := newBrowser(t, srv)
	b.mustSignIn(member.Email, member.Password)
	p := b.get("/w/" + ws + "/settings/api-keys")
	if p.status != http.StatusOK || !hasTestID(p.body, "nav-members") || hasTestID(p.body, "nav-webhooks") {
		t.Fatalf("member's API keys page: %d, shows Members: %v", p.status, hasTestID(p.body, "nav-members"))
	}
	// Members read the members page (who is in the workspace) but get
	// none of the admins' tools, and see no invitations.
	if p := b.get("/w/" + ws + "/settings/members"); p.status != http.StatusOK || !strings.Contains(p.body, admin.Email) ||
		strings.Count(p.body, `data-testid="member-row"`) != 2 || hasTestID(p.body, "invite-form") || hasTestID(p.body, "member-remove") ||
		hasTestID(p.body, "member-promote") || strings.Contains(p.body, invitation.Email) {
		t.Fatalf("member on the members page: %d: %s", p.status, excerpt(p.body))
	}
	for _, post := range []struct {
		path string
		form url.Values
	}{
		{"/settings/invitations", url.Values{"email": {newEmail("by-member")}, "role": {"admin"}}},
		{"/settings/invitations/" + invitation.ExternalID() + "/revoke", nil},
		{"/settings/members/" + userID(member) + "/role", url.Values{"role": {"admin"}}},
		{"/settings/members/" + userID(admin) + "/remove", nil},
	} {
		if p := b.post("/w/"+ws+post.path, post.form); p.status != http.StatusForbidden {
			t.Errorf("member POST %s: status %d, want 403", post.path, p.status)
		}
	}
	members, err := srv.App.Accounts.Members(context.Background(), admin.WorkspaceID)
	if err != nil || len(members) != 2 || members[0].Role != account.RoleAdmin || members[1].Role != account.RoleMember {
		t.Fatalf("members changed by a member: %+v %v", members, err)
	}
	pending, err := srv.App.Accounts.PendingInvitations(context.Background(), admin.WorkspaceID)
	if err != nil || len(pending) != 1 || pending[0].ID != invitation.ID {
		t.Fatalf("invitations changed by a member: %+v %v", pending, err)
	}
}

func TestMembersInviteAcceptChangeRemove(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	ws := admin.WorkspaceExternalID()
	b := newBrowser(t, srv)
	b.mustSignIn(admin.Email, admin.Password)
	members := "/w/" + ws + "/settings/members"
	invite := "/w/" + ws + "/settings/invitations"

	p := b.get(members)
	if p.status != http.StatusOK || textOf(t, p.body, "member-email") != admin.Email || !hasTestID(p.body, "member-sole-admin") ||
		hasTestID(p.body, "invitations-table") || !hasTestID(p.body, "invite-form") {
		t.Fatalf("members page: %d: %s", p.status, excerpt(p.body))
	}

	// Inviting an address with an account and one without reads the same:
	// the page does not tell who uses linkqr.
	nobody := newEmail("nobody")
	flashFor := func(addr string) string {
		t.Helper()
		p := b.post(invite, url.Values{"email": {addr}, "role": {"member"}})
		if p.status != http.StatusSeeOther || p.location != members {
			t.Fatalf("invite %s: %d %q: %s", addr, p.status, p.location, excerpt(p.body))
		}
		return textOf(t, b.follow(p).body, "flash-ok")
	}
	unknown, known := flashFor(nobody), flashFor(strings.ToUpper(other.Email))
	if want := "Invitation link made for " + nobody + " to join as a member: copy it below, it is shown only once."; unknown != want {
		t.Errorf("flash for an address without an account: %q, want %q", unknown, want)
	}
	if strings.Replace(known, other.Email, nobody, 1) != unknown {
		t.Errorf("flashes differ beyond the address: %q vs %q", known, unknown)
	}
	p = b.get(members)
	if n := strings.Count(p.body, `data-testid="invitation-row"`); n != 2 || strings.Count(p.body, `data-testid="member-row"`) != 1 ||
		!strings.Contains(p.body, `data-testid="invitation-email">`+other.Email+`<`) || !strings.Contains(p.body, `data-testid="invitation-email">`+nobody+`<`) {
		t.Fatalf("members page after inviting: %d invitation rows: %s", n, excerpt(p.body))
	}
	if p := b.post(invite, url.Values{"email": {"not an address"}, "role": {"member"}}); p.status != http.StatusUnprocessableEntity ||
		!strings.Contains(textOf(t, p.body, "invite-email-input-error"), "must be an e-mail address") {
		t.Fatalf("inviting a malformed address: %d: %s", p.status, excerpt(p.body))
	}
	if p := b.post(invite, url.Values{"email": {newEmail("x")}, "role": {"owner"}}); p.status != http.StatusUnprocessableEntity ||
		textOf(t, p.body, "invite-role-input-error") != "Role must be admin or member." {
		t.Fatalf("inviting with a bad role: %d: %s", p.status, excerpt(p.body))
	}

	// The invitee sees the invitation after signing in, and joins by
	// accepting it.
	ob := newBrowser(t, srv)
	ob.mustSignIn(other.Email, other.Password)
	if p := ob.get("/w/" + ws + "/links"); p.status != http.StatusNotFound {
		t.Fatalf("invitee reaches the workspace before accepting: %d", p.status)
	}
	home := ob.follow(ob.get("/"))
	if !hasTestID(home.body, "invitations-banner") || textOf(t, home.body, "nav-invitations-count") != "1" {
		t.Fatalf("invitee's front page shows no invitation: %s", excerpt(home.body))
	}
	list := ob.get("/w/invitations")
	invs, err := srv.App.Accounts.InvitationsFor(context.Background(), other.UserID)
	if err != nil || len(invs) != 1 {
		t.Fatalf("invitee's invitations: %+v %v", invs, err)
	}
	if list.status != http.StatusOK || textOf(t, list.body, "invitation-workspace") != invs[0].WorkspaceName ||
		textOf(t, list.body, "invitation-inviter") != admin.Email || textOf(t, list.body, "invitation-role") != "member" ||
		hasTestID(list.body, "invitations-banner") {
		t.Fatalf("invitations page: %d: %s", list.status, excerpt(list.body))
	}
	p = ob.post("/w/invitations/"+invs[0].ExternalID()+"/accept", nil)
	if p.status != http.StatusSeeOther || p.location != "/w/"+ws+"/links" {
		t.Fatalf("accept: %d %q: %s", p.status, p.location, excerpt(p.body))
	}
	if got := textOf(t, ob.follow(p).body, "flash-ok"); got != "You joined "+invs[0].WorkspaceName+" as a member." {
		t.Errorf("after accepting: %q", got)
	}
	if p := ob.get("/w/" + ws + "/links"); p.status != http.StatusOK || hasTestID(p.body, "invitations-banner") || hasTestID(p.body, "nav-invitations") {
		t.Fatalf("member after accepting: %d", p.status)
	}
	if p := b.post(invite, url.Values{"email": {other.Email}, "role": {"admin"}}); p.status != http.StatusUnprocessableEntity ||
		textOf(t, p.body, "invite-email-input-error") != "This address is already a member of this workspace." {
		t.Fatalf("inviting a member: %d: %s", p.status, excerpt(p.body))
	}

	role := members + "/" + userID(other) + "/role"
	if p := b.post(role, url.Values{"role": {"owner"}}); p.status != http.StatusSeeOther || textOf(t, b.follow(p).body, "flash-error") != "Choose admin or member as the role." {
		t.Fatalf("bad role: %d", p.status)
	}
	if p := b.post(role, url.Values{"role": {"admin"}}); p.status != http.StatusSeeOther || textOf(t, b.follow(p).body, "flash-ok") != other.Email+" is now an admin." {
		t.Fatalf("promote: %d", p.status)
	}
	if p := b.post(role, url.Values{"role": {"member"}}); p.status != http.StatusSeeOther || textOf(t, b.follow(p).body, "flash-ok") != other.Email+" is now a member." {
		t.Fatalf("demote: %d", p.status)
	}

	// Removing a member revokes the keys they made for this workspace, and
	// only those.
	mint := func(ws uuid.UUID) string {
		_, token, err := srv.App.Keys.Create(context.Background(), ws, &other.UserID, apikey.CreateInput{Name: "theirs", Scopes: []string{"links:read"}})
		if err != nil {
			t.Fatal(err)
		}
		testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", token, ""), 200)
		return token
	}
	token, ownToken := mint(admin.WorkspaceID), mint(other.WorkspaceID)
	p = b.post(members+"/"+userID(other)+"/remove", confirmed)
	if p.status != http.StatusSeeOther || textOf(t, b.follow(p).body, "flash-ok") != other.Email+" was removed from "+invs[0].WorkspaceName+". 1 API key(s) they created were revoked." {
		t.Fatalf("remove: %d", p.status)
	}
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", token, ""), 401, "unauthorized")
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", ownToken, ""), 200)
	if p := b.post(members+"/"+userID(other)+"/remove", nil); p.status != http.StatusNotFound {
		t.Fatalf("removing a non-member: %d, want 404", p.status)
	}
	if p := ob.get("/w/" + ws + "/links"); p.status != http.StatusNotFound {
		t.Fatalf("removed member still reaches the workspace: %d", p.status)
	}
}

func TestLastAdminCannotBeDemotedOrRemoved(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	ws := admin.WorkspaceExternalID()
	addMember(t, srv, admin, other, account.RoleMember)
	b := newBrowser(t, srv)
	b.mustSignIn(admin.Email, admin.Password)
	members := "/w/" + ws + "/settings/members"
	self := members + "/" + userID(admin)
	const msg = "A workspace needs at least one admin. Make another member an admin first."

	for name, post := range map[string]struct {
		path string
		form url.Values
	}{
		"demote": {self + "/role", url.Values{"role": {"member"}}},
		"remove": {self + "/remove", confirmed},
	} {
		p := b.post(post.path, post.form)
		if p.status != http.StatusSeeOther || p.location != members {
			t.Fatalf("%s the last admin: %d %q", name, p.status, p.location)
		}
		if got := textOf(t, b.follow(p).body, "flash-error"); got != msg {
			t.Errorf("%s the last admin: message %q", name, got)
		}
	}
	got, err := srv.App.Accounts.Workspace(context.Background(), admin.UserID, admin.WorkspaceID)
	if err != nil || got.Role != account.RoleAdmin {
		t.Fatalf("last admin changed: %+v %v", got, err)
	}

	// With a second admin, the first may step down; they then land on a
	// page they can still see.
	if p := b.post(members+"/"+userID(other)+"/role", url.Values{"role": {"admin"}}); p.status != http.StatusSeeOther {
		t.Fatalf("promote: %d", p.status)
	}
	p := b.post(self+"/role", url.Values{"role": {"member"}})
	if p.status != http.StatusSeeOther || p.location != "/w/"+ws+"/settings/api-keys" {
		t.Fatalf("step down: %d %q", p.status, p.location)
	}
	if p := b.get(members); p.status != http.StatusOK || hasTestID(p.body, "invite-form") || hasTestID(p.body, "member-remove") {
		t.Fatalf("former admin on the members page: %d, still with the admins' tools", p.status)
	}
}
