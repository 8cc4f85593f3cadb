package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// mailServer starts linkqr with e-mail on, handing messages to a real SMTP
// server in-process.
func mailServer(t *testing.T) (*testkit.Server, *testkit.Mailbox) {
	t.Helper()
	mb := testkit.StartMailbox(t)
	return testkit.StartServer(t, testkit.WithEnv("LINKQR_SMTP_URL", mb.URL())), mb
}

var (
	inviteLinkRE = regexp.MustCompile(`http://[^\s"<]+/invitations/[A-Za-z0-9_-]{43}`)
	resetLinkRE  = regexp.MustCompile(`http://[^\s"<]+/password/reset/[A-Za-z0-9_-]{43}`)
)

// linkIn returns the one link of re in a message's text part, checking
// that it is absolute on the server's base URL and in the HTML part too.
func linkIn(t *testing.T, srv *testkit.Server, m testkit.Mail, re *regexp.Regexp) string {
	t.Helper()
	links := re.FindAllString(m.Text, -1)
	if len(links) != 1 || !strings.HasPrefix(links[0], srv.URL+"/") {
		t.Fatalf("message %q: links %q in the text part, want one on %s:\n%s", m.Subject, links, srv.URL, m.Text)
	}
	if !strings.Contains(m.HTML, `href="`+links[0]+`"`) {
		t.Errorf("message %q: the HTML part does not link %s", m.Subject, links[0])
	}
	return links[0]
}

// path is the local part of an absolute link.
func path(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}

// noSecretAtRest checks that a token appears nowhere in the database: not
// in its own table, not in River's job arguments.
func noSecretAtRest(t *testing.T, srv *testkit.Server, token string) {
	t.Helper()
	var n int
	err := srv.Pool.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM river_job WHERE args::text LIKE '%' || $1 || '%') +
		(SELECT count(*) FROM invitations WHERE encode(token_hash, 'escape') LIKE '%' || $1 || '%') +
		(SELECT count(*) FROM sessions WHERE data LIKE '%' || $1 || '%')`, token).Scan(&n)
	if err != nil || n != 0 {
		t.Errorf("the token is stored in the clear (%d rows, %v)", n, err)
	}
}

// The whole invitation: the admin invites, the invitee gets the link by
// e-mail, signs up through it (no workspace of their own) and is a member.
func TestInvitationMailedSignUpThroughLink(t *testing.T) {
	t.Parallel()
	srv, mb := mailServer(t)
	admin := testkit.NewTenant(t, srv.Pool)
	ws := admin.WorkspaceExternalID()
	a := newBrowser(t, srv)
	a.mustSignIn(admin.Email, admin.Password)
	invitee := newEmail("invitee")

	p := a.post("/w/"+ws+"/settings/invitations", url.Values{"email": {invitee}, "role": {"member"}})
	members := a.follow(p)
	if got := textOf(t, members.body, "flash-ok"); got != "Invitation e-mailed to "+invitee+" to join as a member." {
		t.Errorf("flash %q", got)
	}
	shown := regexp.MustCompile(`data-testid="invitation-link"[^>]*value="([^"]+)"|value="([^"]+)"[^>]*data-testid="invitation-link"`).FindStringSubmatch(members.body)
	if shown == nil || !strings.Contains(members.body, "Invitation e-mailed to") {
		t.Fatalf("the members page does not show the link once: %s", excerpt(members.body))
	}
	if again := a.get("/w/" + ws + "/settings/members"); hasTestID(again.body, "invitation-link") {
		t.Error("the invitation link is shown a second time")
	}

	m := mb.Wait(invitee, "Join ")
	link := linkIn(t, srv, m, inviteLinkRE)
	if link != shown[1]+shown[2] || !strings.Contains(m.Text, admin.Email) || m.From != "no-reply@127.0.0.1" {
		t.Errorf("mail: link %s (page %s), from %s:\n%s", link, shown[1]+shown[2], m.From, m.Text)
	}
	noSecretAtRest(t, srv, strings.TrimPrefix(path(t, link), "/invitations/"))

	b := newBrowser(t, srv)
	page := b.get(path(t, link))
	if page.header.Get("Referrer-Policy") != "no-referrer" || page.header.Get("Cache-Control") != "no-store" {
		t.Errorf("the invitation page may leak its path: Referrer-Policy %q, Cache-Control %q", page.header.Get("Referrer-Policy"), page.header.Get("Cache-Control"))
	}
	if page.status != http.StatusOK || textOf(t, page.body, "invitation-link-email") != invitee ||
		!strings.Contains(page.body, admin.Email) || !hasTestID(page.body, "invitation-signup-form") {
		t.Fatalf("signed-out invitation page: %d: %s", page.status, excerpt(page.body))
	}
	if p := b.post(path(t, link)+"/signup", url.Values{"password": {"short"}}); p.status != http.StatusUnprocessableEntity ||
		!strings.Contains(textOf(t, p.body, "invitation-signup-password-error"), "10 to 256") {
		t.Fatalf("short password: %d", p.status)
	}
	p = b.post(path(t, link)+"/signup", url.Values{"password": {password}, "email": {"someone-else@example.com"}})
	if p.status != http.StatusSeeOther || p.location != "/w/"+ws+"/links" {
		t.Fatalf("sign-up through the link: %d %q: %s", p.status, p.location, excerpt(p.body))
	}
	if got := textOf(t, b.follow(p).body, "nav-email"); got != invitee {
		t.Errorf("signed in as %q, want %s", got, invitee)
	}
	user, err := srv.App.Accounts.SignIn(context.Background(), invitee, password, netipZero)
	if err != nil {
		t.Fatal(err)
	}
	if all, err := srv.App.Accounts.Workspaces(context.Background(), user.ID); err != nil || len(all) != 1 || all[0].ID != admin.WorkspaceID || all[0].Role != account.RoleMember {
		t.Fatalf("the invitee's workspaces: %+v %v (want only the invited one, as member)", all, err)
	}
	// Used: a 410 that says so, for anyone.
	for _, who := range []*browser{b, newBrowser(t, srv)} {
		if p := who.get(path(t, link)); p.status != http.StatusGone || !strings.Contains(p.body, `data-state="link-used"`) || hasTestID(p.body, "nav-signin") {
			t.Errorf("a used invitation link: %d: %s", p.status, excerpt(p.body))
		}
	}
}

// Every invitation link that cannot be used says why: used (above),
// revoked, replaced, expired (410 each), unknown (404), another address
// (nothing accepted).
func TestInvitationLinkRefusals(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t) // no e-mail: the link is shown to the admin only
	admin, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	ctx := context.Background()
	invite := func(email string) string {
		t.Helper()
		inv, err := srv.App.Accounts.Invite(ctx, admin.WorkspaceID, &admin.UserID, email, account.RoleMember)
		if err != nil || inv.Mailed || !strings.HasPrefix(inv.Link, srv.URL+"/invitations/") {
			t.Fatalf("invite: %+v %v", inv, err)
		}
		return path(t, inv.Link)
	}
	state := func(p page) string {
		m := regexp.MustCompile(`data-state="([a-z-]+)"`).FindStringSubmatch(p.body)
		if m == nil {
			return ""
		}
		return m[1]
	}
	anon := newBrowser(t, srv)

	revoked := invite(newEmail("rv"))
	pending, _ := srv.App.Accounts.PendingInvitations(ctx, admin.WorkspaceID)
	if _, err := srv.App.Accounts.RevokeInvitation(ctx, admin.WorkspaceID, pending[0].ID); err != nil {
		t.Fatal(err)
	}
	replacedAddr := newEmail("rp")
	replaced := invite(replacedAddr)
	newer := invite(replacedAddr)
	expired := invite(newEmail("ex"))
	if _, err := srv.Pool.Exec(ctx, "UPDATE invitations SET created_at = now() - interval '15 days', expires_at = now() - interval '1 day' WHERE token_hash = sha256($1::bytea)",
		strings.TrimPrefix(expired, "/invitations/")); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		path   string
		status int
		state  string
	}{
		"revoked":   {revoked, http.StatusGone, "link-revoked"},
		"replaced":  {replaced, http.StatusGone, "link-revoked"},
		"expired":   {expired, http.StatusGone, "link-expired"},
		"unknown":   {"/invitations/" + strings.Repeat("A", 43), http.StatusNotFound, "link-unknown"},
		"malformed": {"/invitations/nope", http.StatusNotFound, "link-unknown"},
		"newer":     {newer, http.StatusOK, ""},
	} {
		p := anon.get(c.path)
		if p.status != c.status || state(p) != c.state {
			t.Errorf("%s link: %d %q, want %d %q", name, p.status, state(p), c.status, c.state)
		}
		if c.status != http.StatusOK && (strings.Contains(p.body, "/signup") || strings.Contains(p.body, "/docs")) {
			t.Errorf("%s link: the page carries linkqr's navigation", name)
		}
	}

	// Signed in as another address: the page names the invited address and
	// nothing is accepted, not even by posting Join.
	o := newBrowser(t, srv)
	o.mustSignIn(other.Email, other.Password)
	p := o.get(newer)
	if p.status != http.StatusForbidden || !strings.Contains(textOf(t, p.body, "invitation-link-other"), replacedAddr) {
		t.Fatalf("another address: %d: %s", p.status, excerpt(p.body))
	}
	if p := o.post(newer+"/accept", nil); p.status != http.StatusSeeOther || p.location != newer {
		t.Fatalf("Join as another address: %d %q", p.status, p.location)
	}
	if _, err := srv.App.Accounts.Workspace(ctx, other.UserID, admin.WorkspaceID); err == nil {
		t.Fatal("another address joined the workspace")
	}
	// Signed up through a link meanwhile revoked: 410, no account.
	if p := anon.post(revoked+"/signup", url.Values{"password": {password}}); p.status != http.StatusGone {
		t.Errorf("sign-up through a revoked link: %d", p.status)
	}
}

// An invitee who already has an account signs in through the link and
// joins with one button; a sign-up through the link with their address is
// sent to sign in, and comes back to the Join button.
func TestInvitationLinkForExistingAccount(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, invitee := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	inv, err := srv.App.Accounts.Invite(context.Background(), admin.WorkspaceID, &admin.UserID, invitee.Email, account.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	link := path(t, inv.Link)
	b := newBrowser(t, srv)
	b.get(link)
	p := b.post(link+"/signup", url.Values{"password": {"not their password at all"}})
	if p.status != http.StatusSeeOther || p.location != "/login" {
		t.Fatalf("sign-up through the link for a registered address: %d %q", p.status, p.location)
	}
	if login := b.follow(p); !strings.Contains(login.body, `value="`+invitee.Email+`"`) {
		t.Errorf("the sign-in page lacks the address")
	}
	p = b.signIn(invitee.Email, invitee.Password)
	if p.status != http.StatusSeeOther || p.location != link {
		t.Fatalf("sign-in returns to %q, want the invitation", p.location)
	}
	if page := b.follow(p); !hasTestID(page.body, "invitation-link-join") {
		t.Fatalf("no Join button: %s", excerpt(page.body))
	}
	p = b.post(link+"/accept", nil)
	if p.status != http.StatusSeeOther || p.location != "/w/"+admin.WorkspaceExternalID()+"/links" {
		t.Fatalf("join: %d %q", p.status, p.location)
	}
	if ws, err := srv.App.Accounts.Workspace(context.Background(), invitee.UserID, admin.WorkspaceID); err != nil || ws.Role != account.RoleAdmin {
		t.Fatalf("after joining: %+v %v", ws, err)
	}
	if p := b.post(link+"/accept", nil); p.status != http.StatusGone {
		t.Errorf("joining twice: %d", p.status)
	}
}

// Forgot → mail → reset → every old session dead; the forgot answer is the
// same for an address without an account, which gets no mail.
func TestPasswordResetByMail(t *testing.T) {
	t.Parallel()
	srv, mb := mailServer(t)
	user := testkit.NewTenant(t, srv.Pool)
	old := newBrowser(t, srv)
	old.mustSignIn(user.Email, user.Password)

	if p := newBrowser(t, srv).get("/login"); !hasTestID(p.body, "signin-forgot") {
		t.Fatal("the sign-in page does not link to the forgot page")
	}
	b := newBrowser(t, srv)
	nobody := newEmail("nobody")
	answer := func(email string) string {
		t.Helper()
		p := b.post("/password/forgot", url.Values{"email": {email}})
		if p.status != http.StatusOK || !hasTestID(p.body, "forgot-sent") {
			t.Fatalf("forgot %s: %d: %s", email, p.status, excerpt(p.body))
		}
		return strings.ReplaceAll(textOf(t, p.body, "forgot-sent"), email, "…")
	}
	if a, b := answer(nobody), answer(user.Email); a != b {
		t.Errorf("the answers differ:\n%q\n%q", a, b)
	}
	m := mb.Wait(user.Email, "Reset your linkqr password")
	link := linkIn(t, srv, m, resetLinkRE)
	noSecretAtRest(t, srv, strings.TrimPrefix(path(t, link), "/password/reset/"))
	waitJobsDone(t, srv, "password_reset_request")
	if got := mb.To(nobody); len(got) != 0 {
		t.Errorf("an address without an account got %d message(s)", len(got))
	}

	r := newBrowser(t, srv)
	if p := r.get(path(t, link)); p.status != http.StatusOK || textOf(t, p.body, "reset-email") != user.Email {
		t.Fatalf("reset page: %d", p.status)
	}
	if p := r.post(path(t, link), url.Values{"password": {"short"}}); p.status != http.StatusUnprocessableEntity {
		t.Fatalf("short password: %d", p.status)
	}
	const newPassword = "a brand new passphrase"
	p := r.post(path(t, link), url.Values{"password": {newPassword}})
	if p.status != http.StatusSeeOther || p.location != "/" {
		t.Fatalf("reset: %d %q: %s", p.status, p.location, excerpt(p.body))
	}
	if p := r.get("/account"); p.status != http.StatusOK {
		t.Fatalf("not signed in after the reset: %d", p.status)
	}
	if p := old.get("/account"); p.status != http.StatusSeeOther || p.location != "/login" {
		t.Errorf("a session from before the reset still works: %d %q", p.status, p.location)
	}
	if p := newBrowser(t, srv).signIn(user.Email, user.Password); p.status != http.StatusUnauthorized {
		t.Errorf("the old password still works: %d", p.status)
	}
	newBrowser(t, srv).mustSignIn(user.Email, newPassword)
	if p := newBrowser(t, srv).get(path(t, link)); p.status != http.StatusGone || !strings.Contains(p.body, `data-state="link-used"`) {
		t.Errorf("a used reset link: %d", p.status)
	}
	if p := newBrowser(t, srv).post(path(t, link), url.Values{"password": {"yet another passphrase"}}); p.status != http.StatusGone {
		t.Errorf("a used reset link, posted: %d", p.status)
	}
	// An expired link (the operator's, here) says so.
	other, err := srv.App.Accounts.ResetLink(context.Background(), user.Email)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Pool.Exec(context.Background(), "UPDATE password_resets SET created_at = now() - interval '2 hours', expires_at = now() - interval '1 hour' WHERE token_hash = sha256($1::bytea)",
		strings.TrimPrefix(path(t, other), "/password/reset/")); err != nil {
		t.Fatal(err)
	}
	if p := newBrowser(t, srv).get(path(t, other)); p.status != http.StatusGone || !strings.Contains(p.body, `data-state="link-expired"`) {
		t.Errorf("an expired reset link: %d", p.status)
	}
}

// waitJobsDone polls until no job of kind is still to run.
func waitJobsDone(t *testing.T, srv *testkit.Server, kind string) {
	t.Helper()
	wait.Until(t, 15*time.Second, func() (bool, string) {
		var open int
		if err := srv.Pool.QueryRow(context.Background(), "SELECT count(*) FROM river_job WHERE kind = $1 AND state NOT IN ('completed', 'cancelled', 'discarded')", kind).Scan(&open); err != nil {
			t.Fatal(err)
		}
		return open == 0, fmt.Sprintf("%d %s job(s) still open", open, kind)
	})
}

// Without e-mail the forgot page says so, whom to ask (not an operator's
// command: its readers are users), and the operator's link works.
func TestPasswordResetWithoutMail(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	user := testkit.NewTenant(t, srv.Pool)
	b := newBrowser(t, srv)
	for _, p := range []page{b.get("/password/forgot"), b.post("/password/forgot", url.Values{"email": {user.Email}})} {
		if p.status != http.StatusOK || !hasTestID(p.body, "forgot-no-mail") || strings.Contains(p.body, "linkqr admin") || !strings.Contains(p.body, "Ask whoever runs linkqr") || hasTestID(p.body, "forgot-sent") {
			t.Errorf("forgot page without e-mail: %d: %s", p.status, excerpt(p.body))
		}
	}
	if _, err := srv.App.Accounts.ResetLink(context.Background(), newEmail("none")); err == nil {
		t.Error("a reset link for an address without an account")
	}
	link, err := srv.App.Accounts.ResetLink(context.Background(), user.Email)
	if err != nil || !resetLinkRE.MatchString(link) {
		t.Fatalf("operator link %q %v", link, err)
	}
	if p := b.post(path(t, link), url.Values{"password": {"an operator-made passphrase"}}); p.status != http.StatusSeeOther {
		t.Fatalf("reset through the operator's link: %d", p.status)
	}
}

// The forgot form is throttled per address.
func TestForgotThrottled(t *testing.T) {
	t.Parallel()
	srv, _ := mailServer(t)
	b := newBrowser(t, srv)
	email := newEmail("flood")
	for i := range account.MaxForgotsPerEmail {
		if p := b.post("/password/forgot", url.Values{"email": {email}}); p.status != http.StatusOK {
			t.Fatalf("request %d: %d", i+1, p.status)
		}
	}
	p := b.post("/password/forgot", url.Values{"email": {strings.ToUpper(email)}})
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" || !strings.HasPrefix(textOf(t, p.body, "forgot-error"), "Too many reset requests") {
		t.Fatalf("request beyond the limit: %d", p.status)
	}
}

// A sign-up with a registered address mails its owner.
func TestSignUpOfRegisteredAddressMailsTheOwner(t *testing.T) {
	t.Parallel()
	srv, mb := mailServer(t)
	owner := testkit.NewTenant(t, srv.Pool)
	b := newBrowser(t, srv)
	p := b.post("/signup", url.Values{"email": {owner.Email}, "password": {password}, "workspace": {"X"}})
	if p.status != http.StatusSeeOther || p.location != "/login" || !strings.HasSuffix(textOf(t, b.follow(p).body, "flash-ok"), "We also sent a note to that address.") {
		t.Fatalf("sign-up of a registered address: %d %q", p.status, p.location)
	}
	m := mb.Wait(owner.Email, "Someone tried to sign up")
	if !strings.Contains(m.Text, srv.URL+"/password/forgot") {
		t.Errorf("the notice lacks the reset link:\n%s", m.Text)
	}
}

var netipZero = netip.Addr{}
