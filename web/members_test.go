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

func TestMemberCannotReachAdminPages(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, member := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	ws := admin.WorkspaceExternalID()
	addMember(t, srv, ws, member.Email, account.RoleMember)

	adminB := newBrowser(t, srv)
	adminB.mustSignIn(admin.Email, admin.Password)
	if p := adminB.get("/w/" + ws + "/settings/api-keys"); !hasTestID(p.body, "nav-members") {
		t.Fatal("admin does not see the Members entry")
	}

	b := newBrowser(t, srv)
	b.mustSignIn(member.Email, member.Password)
	p := b.get("/w/" + ws + "/settings/api-keys")
	if p.status != http.StatusOK || hasTestID(p.body, "nav-members") || strings.Contains(p.body, "/settings/members") {
		t.Fatalf("member's API keys page: %d, shows Members: %v", p.status, hasTestID(p.body, "nav-members"))
	}
	if p := b.get("/w/" + ws + "/settings/members"); p.status != http.StatusForbidden || !hasTestID(p.body, "error-page") || strings.Contains(p.body, admin.Email) {
		t.Fatalf("member on the members page: %d", p.status)
	}
	for _, post := range []struct {
		path string
		form url.Values
	}{
		{"/settings/members", url.Values{"email": {member.Email}, "role": {"admin"}}},
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
}

func TestMembersAddChangeRemove(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	ws := admin.WorkspaceExternalID()
	b := newBrowser(t, srv)
	b.mustSignIn(admin.Email, admin.Password)
	members := "/w/" + ws + "/settings/members"

	p := b.get(members)
	if p.status != http.StatusOK || textOf(t, p.body, "member-email") != admin.Email || !hasTestID(p.body, "member-sole-admin") {
		t.Fatalf("members page: %d: %s", p.status, excerpt(p.body))
	}

	p = b.post(members, url.Values{"email": {"nobody@example.com"}, "role": {"member"}})
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(textOf(t, p.body, "member-email-input-error"), "has no linkqr account") {
		t.Fatalf("adding an unknown address: %d: %s", p.status, excerpt(p.body))
	}
	p = b.post(members, url.Values{"email": {strings.ToUpper(other.Email)}, "role": {"member"}})
	if p.status != http.StatusSeeOther || textOf(t, b.follow(p).body, "flash-ok") != other.Email+" was added as a member." {
		t.Fatalf("adding a user: %d", p.status)
	}
	p = b.post(members, url.Values{"email": {other.Email}, "role": {"admin"}})
	if p.status != http.StatusUnprocessableEntity || textOf(t, p.body, "member-email-input-error") != "This address is already a member of this workspace." {
		t.Fatalf("adding a member twice: %d: %s", p.status, excerpt(p.body))
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

	// Removing a member revokes the keys they made for this workspace.
	_, token, err := srv.App.Keys.Create(context.Background(), admin.WorkspaceID, &other.UserID, apikey.CreateInput{Name: "theirs", Scopes: []string{"links:read"}})
	if err != nil {
		t.Fatal(err)
	}
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", token, ""), 200)
	p = b.post(members+"/"+userID(other)+"/remove", nil)
	if p.status != http.StatusSeeOther || !strings.Contains(textOf(t, b.follow(p).body, "flash-ok"), "1 API key(s) they created were revoked") {
		t.Fatalf("remove: %d", p.status)
	}
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", token, ""), 401, "unauthorized")
	if p := b.post(members+"/"+userID(other)+"/remove", nil); p.status != http.StatusNotFound {
		t.Fatalf("removing a non-member: %d, want 404", p.status)
	}
	ob := newBrowser(t, srv)
	ob.mustSignIn(other.Email, other.Password)
	if p := ob.get("/w/" + ws + "/links"); p.status != http.StatusNotFound {
		t.Fatalf("removed member still reaches the workspace: %d", p.status)
	}
}

func TestLastAdminCannotBeDemotedOrRemoved(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	ws := admin.WorkspaceExternalID()
	addMember(t, srv, ws, other.Email, account.RoleMember)
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
		"remove": {self + "/remove", nil},
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
	if p := b.get(members); p.status != http.StatusForbidden {
		t.Fatalf("former admin on the members page: %d", p.status)
	}
}
