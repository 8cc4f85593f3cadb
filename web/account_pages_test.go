package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/web"
)

// Changing the password needs the current one and ends every other
// session; this one stays.
func TestAccountChangePassword(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	user := testkit.NewTenant(t, srv.Pool)
	a, other := newBrowser(t, srv), newBrowser(t, srv)
	a.mustSignIn(user.Email, user.Password)
	other.mustSignIn(user.Email, user.Password)

	p := a.get("/account")
	if p.status != http.StatusOK || textOf(t, p.body, "account-email") != user.Email || strings.Count(p.body, `data-testid="session-row"`) != 2 ||
		strings.Count(p.body, `data-testid="session-current"`) != 1 {
		t.Fatalf("account page: %d: %s", p.status, excerpt(p.body))
	}
	if p := a.post("/account/password", url.Values{"current": {"wrong password here"}, "password": {"a new passphrase!"}}); p.status != http.StatusUnprocessableEntity ||
		textOf(t, p.body, "account-current-error") != "Current password is incorrect." {
		t.Fatalf("wrong current password: %d", p.status)
	}
	if p := a.post("/account/password", url.Values{"current": {user.Password}, "password": {"short"}}); p.status != http.StatusUnprocessableEntity ||
		!strings.Contains(textOf(t, p.body, "account-new-error"), "10 to 256") {
		t.Fatalf("short new password: %d", p.status)
	}
	if p := other.get("/account"); p.status != http.StatusOK {
		t.Fatal("a failed change ended the other session")
	}
	p = a.post("/account/password", url.Values{"current": {user.Password}, "password": {"a new passphrase!"}})
	if p.status != http.StatusSeeOther || textOf(t, a.follow(p).body, "flash-ok") != "Your password was changed. 1 other device was signed out." {
		t.Fatalf("change: %d", p.status)
	}
	if p := other.get("/account"); p.status != http.StatusSeeOther || p.location != "/login" {
		t.Errorf("the other session survived: %d", p.status)
	}
	if p := a.get("/account"); p.status != http.StatusOK {
		t.Errorf("this session ended: %d", p.status)
	}
	if p := newBrowser(t, srv).signIn(user.Email, user.Password); p.status != http.StatusUnauthorized {
		t.Errorf("the old password works: %d", p.status)
	}
	newBrowser(t, srv).mustSignIn(user.Email, "a new passphrase!")
}

// The sessions list: revoke one, then all others; another user's session
// cannot be revoked.
func TestAccountSessions(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	user, stranger := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	a, b, c := newBrowser(t, srv), newBrowser(t, srv), newBrowser(t, srv)
	for _, br := range []*browser{a, b, c} {
		br.mustSignIn(user.Email, user.Password)
	}
	s := newBrowser(t, srv)
	s.mustSignIn(stranger.Email, stranger.Password)
	refs := func(br *browser) []string {
		t.Helper()
		var out []string
		for _, m := range regexp.MustCompile(`/account/sessions/([0-9a-f-]{36})/revoke`).FindAllStringSubmatch(br.get("/account").body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	mine := refs(a)
	if len(mine) != 2 { // the other two; not this one
		t.Fatalf("revocable sessions: %v", mine)
	}
	if p := s.post("/account/sessions/"+mine[0]+"/revoke", confirmed); p.status != http.StatusNotFound {
		t.Errorf("a stranger revoking: %d", p.status)
	}
	if p := a.post("/account/sessions/"+mine[0]+"/revoke", confirmed); p.status != http.StatusSeeOther || textOf(t, a.follow(p).body, "flash-ok") != "That device was signed out." {
		t.Fatalf("revoke: %d", p.status)
	}
	alive := 0
	for _, br := range []*browser{b, c} {
		if br.get("/account").status == http.StatusOK {
			alive++
		}
	}
	if alive != 1 {
		t.Fatalf("%d of the two other sessions alive after revoking one", alive)
	}
	if p := a.post("/account/sessions/revoke-others", confirmed); p.status != http.StatusSeeOther || textOf(t, a.follow(p).body, "flash-ok") != "1 other device was signed out." {
		t.Fatalf("revoke others: %d", p.status)
	}
	for _, br := range []*browser{b, c} {
		if p := br.get("/account"); p.status != http.StatusSeeOther {
			t.Errorf("a session survived sign-out everywhere else: %d", p.status)
		}
	}
	if a.get("/account").status != http.StatusOK || s.get("/account").status != http.StatusOK {
		t.Error("the current session, or a stranger's, was ended")
	}
}

// Settings → Workspace: admins rename, members read.
func TestWorkspaceRename(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, member, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, admin, member, account.RoleMember)
	ws := "/w/" + admin.WorkspaceExternalID() + "/settings/workspace"
	a := newBrowser(t, srv)
	a.mustSignIn(admin.Email, admin.Password)
	if p := a.post(ws, url.Values{"name": {"  "}}); p.status != http.StatusUnprocessableEntity ||
		textOf(t, p.body, "workspace-rename-name-error") != "Name must be 1 to 100 characters long." {
		t.Fatalf("empty name: %d", p.status)
	}
	if p := a.post(ws, url.Values{"name": {strings.Repeat("x", 101)}}); p.status != http.StatusUnprocessableEntity {
		t.Fatalf("long name: %d", p.status)
	}
	p := a.post(ws, url.Values{"name": {" Acme Renamed "}})
	if p.status != http.StatusSeeOther || p.location != ws || !strings.Contains(a.follow(p).body, "Acme Renamed") {
		t.Fatalf("rename: %d %q", p.status, p.location)
	}
	m := newBrowser(t, srv)
	m.mustSignIn(member.Email, member.Password)
	if p := m.get(ws); p.status != http.StatusOK || textOf(t, p.body, "workspace-readonly-name") != "Acme Renamed" || hasTestID(p.body, "workspace-rename-form") {
		t.Fatalf("member's view: %d", p.status)
	}
	if p := m.post(ws, url.Values{"name": {"Hijacked"}}); p.status != http.StatusForbidden {
		t.Errorf("member renaming: %d", p.status)
	}
	o := newBrowser(t, srv)
	o.mustSignIn(other.Email, other.Password)
	if p := o.post(ws, url.Values{"name": {"Hijacked"}}); p.status != http.StatusNotFound {
		t.Errorf("another workspace's admin renaming: %d", p.status)
	}
	if got, _ := srv.App.Accounts.WorkspaceByID(context.Background(), admin.WorkspaceID); got.Name != "Acme Renamed" {
		t.Errorf("name %q", got.Name)
	}
}

// A remembered page in a workspace one does not belong to leads, after
// sign-in, to the invitations when one is open for it, else home with a
// notice — never a 404.
func TestReturnPathNeverLeadsToNotFound(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, guest := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	target := "/w/" + admin.WorkspaceExternalID() + "/links"
	signInVia := func() page {
		t.Helper()
		b := newBrowser(t, srv)
		if p := b.get(target); p.location != "/login" {
			t.Fatalf("signed out: %d %q", p.status, p.location)
		}
		p := b.signIn(guest.Email, guest.Password)
		if p.status != http.StatusSeeOther {
			t.Fatalf("sign in: %d", p.status)
		}
		next := b.follow(p)
		if next.status == http.StatusSeeOther {
			next = b.follow(next)
		}
		if next.status != http.StatusOK {
			t.Fatalf("after sign-in via %q: %d", p.location, next.status)
		}
		next.location = p.location
		return next
	}
	p := signInVia()
	if p.location != "/" || !strings.Contains(textOf(t, p.body, "flash-ok"), "not a member") {
		t.Errorf("without an invitation: %q: %s", p.location, excerpt(p.body))
	}
	if _, err := srv.App.Accounts.Invite(context.Background(), admin.WorkspaceID, &admin.UserID, guest.Email, account.RoleMember); err != nil {
		t.Fatal(err)
	}
	p = signInVia()
	if p.location != "/w/invitations" || !hasTestID(p.body, "invitation-accept") {
		t.Errorf("with an invitation: %q: %s", p.location, excerpt(p.body))
	}
	// A member goes where they asked.
	b := newBrowser(t, srv)
	b.get(target)
	if p := b.signIn(admin.Email, admin.Password); p.location != target {
		t.Errorf("a member's return path: %q", p.location)
	}
}

// The public pages of short codes are neutral: no sign-in, sign-up or API
// links, for a scanner who is not a linkqr user.
func TestRedirectPagesAreNeutral(t *testing.T) {
	t.Parallel()
	srv, tn, b, ws := signedIn(t)
	l := createInForm(t, b, ws, url.Values{"target_url": {"example.com/page?x=1"}})
	show := b.get(l)
	if !strings.Contains(show.body, "https://example.com/page?x=1") {
		t.Fatalf("a scheme-less target was not read as https: %s", excerpt(show.body))
	}
	code := regexp.MustCompile(`data-testid="short-url"><code>[^<]*/([A-Za-z0-9_-]+)</code>`).FindStringSubmatch(show.body)
	if code == nil {
		t.Fatalf("no short URL on the link page")
	}
	if p := b.post(l+"/status", url.Values{"status": {"paused"}, "confirmed": {"yes"}}); p.status != http.StatusSeeOther {
		t.Fatalf("pause: %d", p.status)
	}
	anon := newBrowser(t, srv)
	for _, c := range []struct {
		path   string
		status int
	}{{"/" + code[1], http.StatusGone}, {"/NoSuchCode9", http.StatusNotFound}} {
		p := anon.get(c.path)
		if p.status != c.status || !hasTestID(p.body, "neutral-page") {
			t.Errorf("GET %s: %d", c.path, p.status)
		}
		for _, s := range []string{"/login", "/signup", "/docs", "linkqr"} {
			if strings.Contains(strings.ToLower(p.body), strings.ToLower(s)) {
				t.Errorf("GET %s: the page mentions %q", c.path, s)
			}
		}
	}
	// The API stays strict about the scheme.
	resp := srv.Do(t, http.MethodPost, "/api/v1/links", srv.APIKey(t, tn.WorkspaceID), `{"target_url":"example.com/page"}`, "Content-Type", "application/json")
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("API with a scheme-less target: %d, want 422", resp.StatusCode)
	}
}

func TestLogPathHidesTokens(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/invitations/abc":         "/invitations/…",
		"/invitations/abc/signup":  "/invitations/…/signup",
		"/password/reset/abc":      "/password/reset/…",
		"/password/forgot":         "/password/forgot",
		"/w/ws_1/settings/members": "/w/ws_1/settings/members",
	} {
		if got := web.LogPath(in); got != want {
			t.Errorf("LogPath(%q) = %q, want %q", in, got, want)
		}
	}
}
