package web_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/testkit"
)

// dialogs answers every confirm() of the page: accepted while accept is
// true, dismissed otherwise; seen counts them.
type dialogs struct {
	accept atomic.Bool
	seen   atomic.Int32
	last   atomic.Value // string: the last message
}

func answerDialogs(ctx context.Context) *dialogs {
	d := &dialogs{}
	events := chromedp.Events(ctx, cdppage.JavascriptDialogOpening)
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			d.last.Store(ev.Message)
			d.seen.Add(1)
			_, _ = chromedp.Call(ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: d.accept.Load()})
		}
	}()
	return d
}

func css(testID string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + testID + `"]`) }

// runner returns run, which does steps in the browser tab ctx and fails
// the test at the first error.
func runner(t *testing.T, ctx context.Context) func(steps ...chromedp.Action[chromedp.Void]) {
	return func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatal(err)
		}
	}
}

// signInSteps sign in at base's sign-in page with email and password, up
// to the first page (its Settings link).
func signInSteps(base, email, password string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Navigate(base+"/login"), signInForm(email, password, "nav-settings"))
}

// signInForm fills in the sign-in form on the page (the password only
// when given: single sign-on asks for the address alone), sends it, and
// waits for the test ID then.
func signInForm(email, password, then string) chromedp.Action[chromedp.Void] {
	steps := []chromedp.Action[chromedp.Void]{chromedp.WaitVisible(css("signin-email")), chromedp.SendKeys(css("signin-email"), email)}
	if password != "" {
		steps = append(steps, chromedp.SendKeys(css("signin-password"), password))
	}
	return chromedp.Steps(append(steps, chromedp.Click(css("signin-submit")), chromedp.WaitVisible(css(then)))...)
}

// TestBrowserMintUseAndRevokeKey is the whole journey in a real browser:
// sign up (which creates the first workspace), mint a links:read key in
// Settings → API keys, read its secret from the page once, use it against
// the API, and revoke it through the confirmation dialog.
func TestBrowserMintUseAndRevokeKey(t *testing.T) {
	t.Parallel()
	ctx := testkit.Chromium(t)
	srv := testkit.StartServer(t)
	dlg := answerDialogs(ctx)
	run := runner(t, ctx)

	email := newEmail("browser")
	run(
		chromedp.Navigate(srv.URL+"/signup"),
		chromedp.SendKeys(css("signup-email"), email),
		chromedp.SendKeys(css("signup-password"), password),
		chromedp.SendKeys(css("signup-workspace"), "Browser Co"),
		chromedp.Click(css("signup-submit")),
		// Sign-up signs in, on the new workspace's Links page.
		chromedp.WaitVisible(css("flash-ok")),
		chromedp.WaitVisible(css("nav-settings")),
		chromedp.Click(css("nav-settings")),
		chromedp.WaitVisible(css("keys-empty")),
		chromedp.Click(css("create-key")),
		chromedp.WaitVisible(css("key-form")),
		chromedp.SendKeys(css("key-name-input"), "read-only integration"),
		// links:read and analytics:read are ticked to begin with.
		chromedp.Click(css("scope-analytics:read")),
		chromedp.Click(css("key-submit")),
		chromedp.WaitVisible(css("new-key-secret")),
	)
	secret, err := chromedp.Run(ctx, chromedp.Value(css("new-key-secret")))
	if err != nil {
		t.Fatal(err)
	}
	if !secretRE.MatchString(secret) || len(secret) != len("lqk_")+12+1+32 {
		t.Fatalf("secret on the page: %q", secret)
	}
	// Shown once: the page cannot be revisited.
	run(chromedp.Reload(), chromedp.WaitVisible(css("secret-gone")))
	if html, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html"))); err != nil || strings.Contains(html, secret) {
		t.Fatalf("the secret is shown again after a reload (err %v)", err)
	}

	ws := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", secret, ""), 200)
	if s, _ := ws["scopes"].([]any); len(s) != 1 || s[0] != "links:read" || ws["name"] != "Browser Co" {
		t.Fatalf("GET /api/v1/workspace with the new key: %v", ws)
	}

	t.Run("links:write route refused", func(t *testing.T) {
		resp := srv.Do(t, "POST", "/api/v1/links", secret, `{"target_url":"https://example.com/menu"}`)
		p := testkit.Problem(t, resp, 403, "insufficient-scope")
		if p["required_scope"] != "links:write" {
			t.Errorf("required_scope %v", p["required_scope"])
		}
	})

	// Revoking asks first: dismissing the dialog keeps the key.
	run(chromedp.Click(css("nav-api-keys")), chromedp.WaitVisible(css("keys-table")))
	// Click returns once the page's confirm() has been answered, and the
	// answer is given only after the dialog was counted.
	run(chromedp.Click(css("revoke-key")), chromedp.WaitVisible(css("keys-table")))
	if n := dlg.seen.Load(); n != 1 {
		t.Fatalf("%d confirmation dialogs when revoking, want 1", n)
	}
	if msg, _ := dlg.last.Load().(string); !strings.Contains(msg, "read-only integration") {
		t.Errorf("confirmation message %q", msg)
	}
	testkit.JSON(t, srv.Do(t, "GET", "/api/v1/workspace", secret, ""), 200)

	dlg.accept.Store(true)
	run(
		chromedp.Click(css("revoke-key")),
		chromedp.WaitVisible(css("flash-ok")),
		chromedp.WaitVisible(css("keys-empty")),
	)
	testkit.Problem(t, srv.Do(t, "GET", "/api/v1/workspace", secret, ""), 401, "unauthorized")
}

// saveShot saves a full-page PNG of the current page as <name>.png in the
// directory named by LINKQR_TEST_SCREENSHOTS, for people to look at; it does
// nothing when the variable is unset.
func saveShot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("LINKQR_TEST_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil && strings.Contains(err.Error(), "too large") {
		// Chromium captures at most 16,384 px of height (the API
		// reference on a phone is taller): keep the first screen.
		png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	}
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
}

// TestBrowserInviteAcceptAndRevoke: an admin invites two addresses from
// Settings → Members, revokes one through the confirmation dialog (it
// disappears), signs out; the other invitee signs in, sees the invitation
// in the top bar and the banner, accepts it and lands in the workspace.
func TestBrowserInviteAcceptAndRevoke(t *testing.T) {
	t.Parallel()
	ctx := testkit.Chromium(t)
	srv := testkit.StartServer(t)
	dlg := answerDialogs(ctx)
	admin, bob := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	ws := admin.WorkspaceExternalID()
	carol := newEmail("carol")
	run := runner(t, ctx)
	text := func(sel chromedp.CSS) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(s)
	}
	// submit clicks a button that loads a new page and waits for testID on
	// that page: the page being left is marked first, so an element it
	// still shows (a flash from the previous post) does not count.
	submit := func(button chromedp.CSS, testID string) {
		t.Helper()
		run(
			chromedp.Evaluate[chromedp.Void](`document.body.dataset.left = "1"`),
			chromedp.Click(button),
			chromedp.WaitVisible(chromedp.CSS(`body:not([data-left]) [data-testid="`+testID+`"]`)),
		)
	}
	signIn := func(email, pw string) {
		t.Helper()
		run(
			chromedp.Navigate(srv.URL+"/login"),
			chromedp.WaitVisible(css("signin-email")),
			chromedp.SendKeys(css("signin-email"), email),
			chromedp.SendKeys(css("signin-password"), pw),
		)
		submit(css("signin-submit"), "nav-email")
	}
	inviteAddr := func(email string) {
		t.Helper()
		run(
			chromedp.WaitVisible(css("invite-form")),
			chromedp.SendKeys(css("invite-email-input"), email),
		)
		submit(css("invite-submit"), "flash-ok")
		if got := text(css("flash-ok")); !strings.HasPrefix(got, "Invitation link made for "+strings.ToLower(email)) {
			t.Fatalf("flash after inviting %s: %q", email, got)
		}
	}

	signIn(admin.Email, admin.Password)
	run(
		chromedp.Navigate(srv.URL+"/w/"+ws+"/settings/members"),
		chromedp.WaitVisible(css("members-table")),
	)
	inviteAddr(bob.Email)
	inviteAddr(carol)
	run(chromedp.WaitVisible(css("invitations-table")))
	if html, err := chromedp.Run(ctx, chromedp.OuterHTML(css("invitations-table"))); err != nil ||
		strings.Count(html, `data-testid="invitation-row"`) != 2 || !strings.Contains(html, bob.Email) || !strings.Contains(html, carol) {
		t.Fatalf("open invitations table (err %v): %s", err, html)
	}
	saveShot(t, ctx, "members-pending")

	// Revoke carol's invitation: the confirmation names her, and once
	// accepted her row is gone while bob's stays.
	pending, err := srv.App.Accounts.PendingInvitations(context.Background(), admin.WorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	var carolRow string
	for _, inv := range pending {
		if inv.Email == carol {
			carolRow = `tr[data-invitation-id="` + inv.ExternalID() + `"]`
		}
	}
	if carolRow == "" {
		t.Fatalf("no open invitation for %s: %+v", carol, pending)
	}
	dlg.accept.Store(true)
	submit(chromedp.CSS(carolRow+` [data-testid="invitation-revoke"]`), "flash-ok")
	run(chromedp.WaitNotPresent(chromedp.CSS(carolRow)))
	if msg, _ := dlg.last.Load().(string); !strings.Contains(msg, carol) {
		t.Errorf("confirmation message %q does not name %s", msg, carol)
	}
	if got := text(css("flash-ok")); got != "The invitation for "+carol+" was revoked." {
		t.Errorf("flash after revoking: %q", got)
	}
	if got := text(css("invitation-email")); got != bob.Email {
		t.Errorf("remaining invitation: %q, want %s", got, bob.Email)
	}
	submit(css("sign-out"), "nav-signin")

	// Bob signs in: the top bar and a banner tell him, the invitations page
	// names the workspace and the inviter, and accepting takes him there.
	signIn(bob.Email, bob.Password)
	run(chromedp.WaitVisible(css("invitations-banner")))
	if got := text(css("nav-invitations-count")); got != "1" {
		t.Errorf("top bar count %q, want 1", got)
	}
	saveShot(t, ctx, "invitee-banner")
	submit(css("invitations-review"), "invitation-card")
	if got := text(css("invitation-inviter")); got != admin.Email {
		t.Errorf("inviter on the card: %q", got)
	}
	saveShot(t, ctx, "invitee-invitations")
	submit(css("invitation-accept"), "flash-ok")
	if got := text(css("flash-ok")); !strings.HasPrefix(got, "You joined ") || !strings.HasSuffix(got, " as a member.") {
		t.Errorf("flash after accepting: %q", got)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || loc != srv.URL+"/w/"+ws+"/links" {
		t.Fatalf("after accepting, at %q (err %v), want the workspace's links", loc, err)
	}
	if sel, err := chromedp.Run(ctx, chromedp.Value(css("workspace-select"))); err != nil || sel != ws {
		t.Errorf("workspace switcher shows %q (err %v), want %s", sel, err, ws)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="invitations-banner"],[data-testid="nav-invitations"]').length`)); err != nil || n != 0 {
		t.Errorf("invitation notices after accepting: %d (err %v)", n, err)
	}
	saveShot(t, ctx, "invitee-joined")
	run(chromedp.Navigate(srv.URL+"/w/invitations"), chromedp.WaitVisible(css("invitations-empty")))
	saveShot(t, ctx, "invitee-none")
	if got, err := srv.App.Accounts.Workspace(context.Background(), bob.UserID, admin.WorkspaceID); err != nil || got.Role != "member" {
		t.Fatalf("bob's membership: %+v %v", got, err)
	}
}
