package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/testkit"
)

func TestSignUpCreatesUserAndAdminWorkspace(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	b := newBrowser(t, srv)
	email := newEmail("new")

	p := b.post("/signup", url.Values{"email": {"not-an-address"}, "password": {"short"}, "workspace": {" "}})
	if p.status != http.StatusUnprocessableEntity {
		t.Fatalf("invalid sign-up: status %d", p.status)
	}
	for id, want := range map[string]string{
		"signup-email-error":     "This address must be an e-mail address like name@example.com.",
		"signup-password-error":  "Password must be 10 to 256 characters long.",
		"signup-workspace-error": "Workspace name must be 1 to 100 characters long.",
	} {
		if got := textOf(t, p.body, id); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}

	ws := b.signUp(email, password, "Acme Marketing")
	page := b.get("/w/" + ws + "/links")
	if page.status != http.StatusOK || !strings.Contains(page.body, "Acme Marketing") || textOf(t, page.body, "nav-email") != email {
		t.Fatalf("after sign-up: %d: %s", page.status, excerpt(page.body))
	}
	if !strings.Contains(textOf(t, page.body, "flash-ok"), "Acme Marketing") {
		t.Error("no welcome message")
	}
	// The new user administers the workspace.
	if p := b.get("/w/" + ws + "/settings/members"); p.status != http.StatusOK || textOf(t, p.body, "member-role") != "admin" {
		t.Fatalf("members page of the new workspace: %d", p.status)
	}

	// The address is taken now, in any case.
	again := newBrowser(t, srv).post("/signup", url.Values{"email": {strings.ToUpper(email)}, "password": {password}, "workspace": {"Other"}})
	if again.status != http.StatusUnprocessableEntity || !strings.Contains(textOf(t, again.body, "signup-email-error"), "already has a linkqr account") {
		t.Fatalf("duplicate sign-up: %d: %s", again.status, excerpt(again.body))
	}
}

func TestOtherUsersWorkspaceIsNotFound(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	mine, theirs := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	b := newBrowser(t, srv)
	b.mustSignIn(mine.Email, mine.Password)
	other := "/w/" + theirs.WorkspaceExternalID()

	for _, path := range []string{other, other + "/links", other + "/settings/api-keys", other + "/settings/api-keys/new",
		other + "/settings/members", "/w/ws_nonsense/links", "/w/" + strings.Replace(theirs.WorkspaceExternalID(), "ws_", "lnk_", 1) + "/links"} {
		p := b.get(path)
		if p.status != http.StatusNotFound || !hasTestID(p.body, "error-page") {
			t.Errorf("GET %s: status %d, want the 404 page", path, p.status)
		}
		if strings.Contains(p.body, "Workspace ") && strings.Contains(p.body, theirs.Email) {
			t.Errorf("GET %s reveals the other workspace", path)
		}
	}
	for _, post := range []struct {
		path string
		form url.Values
	}{
		{other + "/settings/api-keys", url.Values{"name": {"k"}, "scopes": {"links:read"}}},
		{other + "/settings/members", url.Values{"email": {mine.Email}, "role": {"admin"}}},
		{"/w/switch", url.Values{"workspace": {theirs.WorkspaceExternalID()}}},
	} {
		if p := b.post(post.path, post.form); p.status != http.StatusNotFound {
			t.Errorf("POST %s: status %d, want 404", post.path, p.status)
		}
	}
	keys, err := srv.App.Keys.List(context.Background(), theirs.WorkspaceID, nil)
	if err != nil || len(keys) != 0 {
		t.Fatalf("keys of the other workspace: %v, %v", keys, err)
	}
	members, err := srv.App.Accounts.Members(context.Background(), theirs.WorkspaceID)
	if err != nil || len(members) != 1 {
		t.Fatalf("members of the other workspace: %v, %v", members, err)
	}
}

func TestWorkspaceCreateAndSwitch(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	b := newBrowser(t, srv)
	first := b.signUp(newEmail("sw"), password, "First")

	if p := b.post("/w", url.Values{"name": {""}}); p.status != http.StatusUnprocessableEntity ||
		textOf(t, p.body, "workspace-name-error") != "Workspace name must be 1 to 100 characters long." {
		t.Fatalf("empty name: %d: %s", p.status, excerpt(p.body))
	}
	p := b.post("/w", url.Values{"name": {"Second"}})
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/w/ws_") || strings.Contains(p.location, first) {
		t.Fatalf("create workspace: %d %q", p.status, p.location)
	}
	second := strings.TrimSuffix(strings.TrimPrefix(p.location, "/w/"), "/links")
	page := b.follow(p)
	if !strings.Contains(textOf(t, page.body, "flash-ok"), "Second") || !strings.Contains(page.body, `<option value="`+second+`" selected>`) {
		t.Fatalf("new workspace page: %s", excerpt(page.body))
	}
	if p := b.get("/"); p.location != "/w/"+second+"/links" {
		t.Errorf("home after creating: %q, want the new workspace", p.location)
	}

	sw := b.post("/w/switch", url.Values{"workspace": {first}, "section": {"api-keys"}})
	if sw.status != http.StatusSeeOther || sw.location != "/w/"+first+"/settings/api-keys" {
		t.Fatalf("switch: %d %q", sw.status, sw.location)
	}
	if p := b.get("/"); p.location != "/w/"+first+"/links" {
		t.Errorf("home after switching: %q, want the chosen workspace", p.location)
	}
	if page := b.follow(sw); !strings.Contains(page.body, `<option value="`+first+`" selected>`) || !strings.Contains(page.body, `<option value="`+second+`">`) {
		t.Errorf("switcher after switching: %s", excerpt(page.body))
	}
}
