package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
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

	// A valid sign-up signs in at once (a new session id) and lands on the
	// new workspace's Links page.
	before := b.sessionCookie()
	p = b.post("/signup", url.Values{"email": {email}, "password": {password}, "workspace": {" Acme Marketing "}})
	m := regexp.MustCompile(`^/w/(ws_[0-9a-z]+)/links$`).FindStringSubmatch(p.location)
	if p.status != http.StatusSeeOther || m == nil {
		t.Fatalf("sign up: %d %q: %s", p.status, p.location, excerpt(p.body))
	}
	if after := b.sessionCookie(); after == "" || after == before {
		t.Errorf("the session was not regenerated at sign-up")
	}
	ws := m[1]
	page := b.follow(p)
	if page.status != http.StatusOK || !strings.Contains(page.body, "Acme Marketing") || textOf(t, page.body, "nav-email") != email {
		t.Fatalf("after sign-up: %d: %s", page.status, excerpt(page.body))
	}
	if got := textOf(t, page.body, "flash-ok"); !strings.Contains(got, "Acme Marketing") {
		t.Errorf("welcome message %q", got)
	}
	// The new user administers the workspace.
	if p := b.get("/w/" + ws + "/settings/members"); p.status != http.StatusOK || textOf(t, p.body, "member-role") != "admin" {
		t.Fatalf("members page of the new workspace: %d", p.status)
	}
}

// A sign-up with a registered address, with the owner's password or
// another one, changes nothing and is not signed in: it goes to the
// sign-in page with the address filled in and the way to reset the
// password (the trade-off is documented at account.Service.SignUp).
func TestSignUpOfRegisteredAddressGoesToSignIn(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	owner := newEmail("owner")
	ownerWS := newBrowser(t, srv).signUp(owner, password, "Owner Co")
	hashOf := func() (hash string, workspaces int) {
		t.Helper()
		err := srv.Pool.QueryRow(context.Background(), `SELECT password_hash, (SELECT count(*) FROM workspaces)
			FROM users WHERE lower(email) = lower($1)`, owner).Scan(&hash, &workspaces)
		if err != nil {
			t.Fatal(err)
		}
		return hash, workspaces
	}
	hash, workspaces := hashOf()
	for name, try := range map[string][2]string{
		"registered, another password": {strings.ToUpper(owner), "an attacker's password"},
		"registered, owner's password": {owner, password},
	} {
		b := newBrowser(t, srv)
		p := b.post("/signup", url.Values{"email": {try[0]}, "password": {try[1]}, "workspace": {"Same Name"}})
		if p.status != http.StatusSeeOther || p.location != "/login" {
			t.Fatalf("%s: %d %q", name, p.status, p.location)
		}
		login := b.follow(p)
		if got := textOf(t, login.body, "flash-ok"); !strings.HasPrefix(got, "This address already has a linkqr account") || strings.Contains(got, "sent a note") {
			t.Errorf("%s: message %q", name, got)
		}
		if !strings.Contains(login.body, `value="`+try[0]+`"`) || !hasTestID(login.body, "signin-forgot") {
			t.Errorf("%s: the sign-in page lacks the address or the reset link: %s", name, excerpt(login.body))
		}
		if p := b.get("/w/" + ownerWS + "/links"); p.status != http.StatusSeeOther || p.location != "/login" {
			t.Errorf("%s: signed in by the sign-up: %d %q", name, p.status, p.location)
		}
	}
	if h, n := hashOf(); h != hash || n != workspaces {
		t.Errorf("after sign-ups of the registered address: hash changed %v, workspaces %d → %d", h != hash, workspaces, n)
	}
	b := newBrowser(t, srv)
	if p := b.signIn(owner, "an attacker's password"); p.status != http.StatusUnauthorized {
		t.Errorf("the second sign-up's password signs in: %d", p.status)
	}
	if ws := b.signInHome(owner, password); ws != ownerWS {
		t.Errorf("the owner's workspace is %s, want %s", ws, ownerWS)
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
	// From the Overview, the switcher stays on the Overview.
	if sw := b.post("/w/switch", url.Values{"workspace": {second}, "section": {"overview"}}); sw.status != http.StatusSeeOther || sw.location != "/w/"+second+"/overview" {
		t.Errorf("switch from the overview: %d %q", sw.status, sw.location)
	} else if page := b.follow(sw); page.status != http.StatusOK || !strings.Contains(page.body, `data-testid="overview-range"`) {
		t.Errorf("the other workspace's overview: %d %s", page.status, excerpt(page.body))
	}
}
