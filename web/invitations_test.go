package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/testkit"
)

// invite creates an invitation through the account service and returns
// its "inv_…" id.
func invite(t *testing.T, srv *testkit.Server, admin testkit.Tenant, email string) string {
	t.Helper()
	inv, err := srv.App.Accounts.Invite(context.Background(), admin.WorkspaceID, &admin.UserID, email, account.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	return inv.ExternalID()
}

// openInvitations is how many open invitations tn's address has.
func openInvitations(t *testing.T, srv *testkit.Server, tn testkit.Tenant) int {
	t.Helper()
	n, err := srv.App.Accounts.CountInvitationsFor(context.Background(), tn.UserID)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestInvitationRevokedByAdmin(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, carol := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	ws := admin.WorkspaceExternalID()
	id := invite(t, srv, admin, carol.Email)
	b := newBrowser(t, srv)
	b.mustSignIn(admin.Email, admin.Password)
	members := "/w/" + ws + "/settings/members"

	p := b.get(members)
	if !strings.Contains(p.body, `data-invitation-id="`+id+`"`) || textOf(t, p.body, "invitation-email") != carol.Email {
		t.Fatalf("members page lists no invitation: %s", excerpt(p.body))
	}
	p = b.post("/w/"+ws+"/settings/invitations/"+id+"/revoke", confirmed)
	if p.status != http.StatusSeeOther || p.location != members {
		t.Fatalf("revoke: %d %q", p.status, p.location)
	}
	p = b.follow(p)
	if textOf(t, p.body, "flash-ok") != "The invitation for "+carol.Email+" was revoked." || hasTestID(p.body, "invitation-row") {
		t.Fatalf("after revoking: %s", excerpt(p.body))
	}
	if p := b.post("/w/"+ws+"/settings/invitations/"+id+"/revoke", nil); p.status != http.StatusNotFound {
		t.Errorf("revoke twice: %d, want 404", p.status)
	}

	cb := newBrowser(t, srv)
	cb.mustSignIn(carol.Email, carol.Password)
	if p := cb.get("/w/invitations"); p.status != http.StatusOK || !hasTestID(p.body, "invitations-empty") || hasTestID(p.body, "nav-invitations") {
		t.Fatalf("invitee's page after the revocation: %d: %s", p.status, excerpt(p.body))
	}
	p = cb.post("/w/invitations/"+id+"/accept", nil)
	if p.status != http.StatusNotFound || !strings.Contains(p.body, "Invitation not found") {
		t.Fatalf("accepting a revoked invitation: %d: %s", p.status, excerpt(p.body))
	}
	if p := cb.get("/w/" + ws + "/links"); p.status != http.StatusNotFound {
		t.Fatalf("joined through a revoked invitation: %d", p.status)
	}
}

func TestInvitationDeclined(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, dave := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	ws := admin.WorkspaceExternalID()
	id := invite(t, srv, admin, dave.Email)
	db := newBrowser(t, srv)
	db.mustSignIn(dave.Email, dave.Password)

	p := db.post("/w/invitations/"+id+"/decline", nil)
	if p.status != http.StatusSeeOther || p.location != "/w/invitations" {
		t.Fatalf("decline: %d %q", p.status, p.location)
	}
	p = db.follow(p)
	if got := textOf(t, p.body, "flash-ok"); !strings.HasPrefix(got, "You declined the invitation to join ") || !hasTestID(p.body, "invitations-empty") {
		t.Fatalf("after declining: %q: %s", got, excerpt(p.body))
	}
	if p := db.post("/w/invitations/"+id+"/accept", nil); p.status != http.StatusNotFound {
		t.Errorf("accept after declining: %d, want 404", p.status)
	}
	if p := db.get("/w/" + ws + "/links"); p.status != http.StatusNotFound {
		t.Fatalf("joined through a declined invitation: %d", p.status)
	}
	ab := newBrowser(t, srv)
	ab.mustSignIn(admin.Email, admin.Password)
	if p := ab.get("/w/" + ws + "/settings/members"); hasTestID(p.body, "invitation-row") {
		t.Errorf("a declined invitation is still listed for the admin")
	}
}

// Only the addressee answers an invitation, only its workspace's admins
// revoke it; to everyone else its id is a 404 like a made-up one, and
// their attempts change nothing.
func TestInvitationIDsAreScoped(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, bob, mallory, member := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, admin, member, account.RoleMember)
	ws, malloryWS := admin.WorkspaceExternalID(), mallory.WorkspaceExternalID()
	id := invite(t, srv, admin, bob.Email)

	mb := newBrowser(t, srv)
	mb.mustSignIn(mallory.Email, mallory.Password)
	for _, path := range []string{
		"/w/invitations/" + id + "/accept",
		"/w/invitations/" + id + "/decline",
		"/w/" + malloryWS + "/settings/invitations/" + id + "/revoke", // her workspace, not the invitation's
		"/w/" + ws + "/settings/invitations/" + id + "/revoke",        // the invitation's workspace, not hers
		"/w/invitations/inv_notanid/accept",
		"/w/invitations/" + strings.Replace(id, "inv_", "ws_", 1) + "/accept",
		"/w/" + malloryWS + "/settings/invitations/nonsense/revoke",
	} {
		if p := mb.post(path, nil); p.status != http.StatusNotFound {
			t.Errorf("POST %s by someone else: %d, want 404", path, p.status)
		}
	}
	if p := mb.get("/w/invitations"); !hasTestID(p.body, "invitations-empty") || strings.Contains(p.body, id) {
		t.Errorf("someone else's invitations page shows the invitation")
	}

	// A member of the workspace who is not an admin cannot revoke it.
	memb := newBrowser(t, srv)
	memb.mustSignIn(member.Email, member.Password)
	if p := memb.post("/w/"+ws+"/settings/invitations/"+id+"/revoke", nil); p.status != http.StatusForbidden {
		t.Errorf("member revokes: %d, want 403", p.status)
	}

	// A cross-site form post cannot make the addressee accept.
	bb := newBrowser(t, srv)
	bb.mustSignIn(bob.Email, bob.Password)
	if p := bb.post("/w/invitations/"+id+"/accept", nil, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"); p.status != http.StatusForbidden {
		t.Errorf("cross-site accept: %d, want 403", p.status)
	}
	if n := openInvitations(t, srv, bob); n != 1 {
		t.Fatalf("the invitation after the attempts: %d open, want 1", n)
	}
	if p := bb.post("/w/invitations/"+id+"/accept", nil); p.status != http.StatusSeeOther || p.location != "/w/"+ws+"/links" {
		t.Fatalf("the addressee accepts: %d %q", p.status, p.location)
	}
}

// Someone without any workspace who has an invitation is sent to it from
// the front page, rather than to "create a workspace".
func TestFrontPageLeadsToInvitationsWithoutWorkspace(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	owner, helper, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	// owner hands their only workspace to helper and is removed from it.
	addMember(t, srv, owner, helper, account.RoleAdmin)
	if _, _, err := srv.App.Accounts.RemoveMember(context.Background(), owner.WorkspaceID, owner.UserID); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, srv)
	b.mustSignIn(owner.Email, owner.Password)
	if p := b.get("/"); p.status != http.StatusSeeOther || p.location != "/w/new" {
		t.Fatalf("front page without workspace or invitation: %d %q", p.status, p.location)
	}
	invite(t, srv, other, owner.Email)
	p := b.get("/")
	if p.status != http.StatusSeeOther || p.location != "/w/invitations" {
		t.Fatalf("front page with an invitation: %d %q", p.status, p.location)
	}
	if p := b.follow(p); p.status != http.StatusOK || strings.Count(p.body, `data-testid="invitation-card"`) != 1 {
		t.Fatalf("invitations page: %d: %s", p.status, excerpt(p.body))
	}
}
