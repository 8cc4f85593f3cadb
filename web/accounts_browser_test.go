package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/testkit"
)

// TestBrowserInviteAndResetOnAPhone walks the two flows of a team that
// manages itself in Chromium at 390 px, with e-mail on: an admin invites
// an address, the invitee opens the mailed link signed out, creates an
// account through it and lands in the workspace; then they forget their
// password, ask for a link, open the mailed link and set a new password.
// Every page is checked for overflow at 390 and 1280 px (pilot.look).
func TestBrowserInviteAndResetOnAPhone(t *testing.T) {
	t.Parallel()
	ctx := chromiumUser(t)
	mb := testkit.StartMailbox(t)
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_SMTP_URL", mb.URL()))
	p := &pilot{t: t, ctx: ctx, srv: srv, js: true}
	admin := testkit.NewTenant(t, srv.Pool)
	ws := "/w/" + admin.WorkspaceExternalID()
	invitee := newEmail("phone-invitee")
	phone := chromedp.EmulateViewport(390, 844)
	signOut := func() {
		t.Helper()
		p.run(phone, chromedp.Navigate(srv.URL+ws+"/links"), chromedp.WaitVisible(css("menu-button")), chromedp.Click(css("menu-button")), chromedp.WaitVisible(css("sign-out")))
		p.submit(css("sign-out"), "signin-page")
	}

	p.run(phone, chromedp.Navigate(srv.URL+"/login"), chromedp.WaitVisible(css("signin-email")),
		chromedp.SendKeys(css("signin-email"), admin.Email), chromedp.SendKeys(css("signin-password"), admin.Password))
	p.submit(css("signin-submit"), "new-link-form")
	p.run(phone, chromedp.Navigate(srv.URL+ws+"/settings/members"), chromedp.WaitVisible(css("invite-form")),
		chromedp.SendKeys(css("invite-email-input"), invitee))
	p.submit(css("invite-submit"), "invitation-link-card")
	p.look("members-invited")
	shown := p.eval(`document.querySelector('[data-testid="invitation-link"]').value`)
	m := mb.Wait(invitee, "Join ")
	link := linkIn(t, srv, m, inviteLinkRE)
	if link != shown {
		t.Fatalf("the page shows %s, the mail says %s", shown, link)
	}
	signOut()

	p.run(phone, chromedp.Navigate(link), chromedp.WaitVisible(css("invitation-signup-password")))
	p.look("invitation-signed-out")
	p.run(phone, chromedp.SendKeys(css("invitation-signup-password"), password))
	p.submit(css("invitation-signup-submit"), "new-link-form")
	if got := p.eval(`document.querySelector('[data-testid="nav-email"]').textContent.trim()`); got != invitee {
		t.Fatalf("signed in as %q after joining, want %s", got, invitee)
	}
	if !strings.HasSuffix(p.eval(`location.pathname`), ws+"/links") {
		t.Fatalf("after joining: %s", p.eval(`location.pathname`))
	}
	p.run(phone, chromedp.Navigate(srv.URL+"/account"), chromedp.WaitVisible(css("sessions-table")))
	p.look("account")
	p.run(phone, chromedp.Navigate(srv.URL+ws+"/settings/workspace"), chromedp.WaitVisible(css("workspace-readonly")))
	p.look("workspace-member")
	signOut()

	p.run(phone, chromedp.Navigate(srv.URL+"/login"), chromedp.WaitVisible(css("signin-forgot")))
	p.submit(css("signin-forgot"), "forgot-email")
	p.run(phone, chromedp.SendKeys(css("forgot-email"), invitee))
	p.submit(css("forgot-submit"), "forgot-sent")
	p.look("forgot-sent")
	reset := linkIn(t, srv, mb.Wait(invitee, "Reset your linkqr password"), resetLinkRE)
	p.run(phone, chromedp.Navigate(reset), chromedp.WaitVisible(css("reset-password")))
	p.look("reset")
	p.run(phone, chromedp.SendKeys(css("reset-password"), "a phone-made passphrase"))
	p.submit(css("reset-submit"), "new-link-form")
	newBrowser(t, srv).mustSignIn(invitee, "a phone-made passphrase")

	// The used links say so, on a neutral page that fits the phone.
	p.run(phone, chromedp.Navigate(link), chromedp.WaitVisible(css("neutral-page")))
	p.look("invitation-used")
	p.run(phone, chromedp.Navigate(reset), chromedp.WaitVisible(css("neutral-page")))
	if !strings.Contains(p.text("neutral-heading"), "already used") {
		t.Errorf("used reset link: %q", p.text("neutral-heading"))
	}
}
