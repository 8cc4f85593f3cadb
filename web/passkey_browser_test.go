package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	cdpwebauthn "github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// TestBrowserPasskey registers a passkey on Account → Two-factor sign-in
// with Chromium's DevTools virtual authenticator, then signs in with it
// without a password, and uses it as the second factor after a password.
func TestBrowserPasskey(t *testing.T) {
	t.Parallel()
	ctx := testkit.Chromium(t)
	srv := testkit.StartServer(t, testkit.WithLocalhost())
	tn := testkit.NewTenant(t, srv.Pool)
	run := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			loc, _ := chromedp.Run(ctx, chromedp.Location())
			html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("main")))
			t.Fatalf("%v at %s: %s", err, loc, excerpt(html))
		}
	}
	if _, err := chromedp.Call(ctx, cdpwebauthn.Enable, cdpwebauthn.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdpwebauthn.AddVirtualAuthenticator, cdpwebauthn.AddVirtualAuthenticatorParams{Options: &cdpwebauthn.VirtualAuthenticatorOptions{
		Protocol: cdpwebauthn.AuthenticatorProtocolCtap2, Transport: cdpwebauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
	}}); err != nil {
		t.Fatal(err)
	}

	run(
		signInSteps(srv.URL, tn.Email, tn.Password),
		chromedp.Navigate(srv.URL+"/account/two-factor"),
		chromedp.WaitVisible(css("passkey-add")),
		chromedp.SendKeys(css("passkey-name"), "Virtual key"),
		chromedp.Click(css("passkey-add")),
		chromedp.WaitVisible(css("passkey-row")),
	)
	saveShot(t, ctx, "account-two-factor")
	if n := scalarInt(t, srv, `SELECT count(*) FROM passkeys WHERE user_id = $1 AND name = 'Virtual key'`, tn.UserID); n != 1 {
		t.Fatalf("%d passkeys stored", n)
	}

	// Signed out, the passkey alone signs in.
	run(
		chromedp.Click(css("sign-out")),
		chromedp.WaitVisible(css("signin-passkey")),
	)
	saveShot(t, ctx, "signin-with-passkey")
	run(
		chromedp.Click(css("signin-passkey")),
		chromedp.WaitVisible(css("nav-settings")),
	)
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || !strings.Contains(loc, "/w/ws_") {
		t.Fatalf("after the passkey sign-in: %q, %v", loc, err)
	}
	if n := scalarInt(t, srv, `SELECT count(*) FROM passkeys WHERE user_id = $1 AND last_used_at IS NOT NULL`, tn.UserID); n != 1 {
		t.Fatalf("the passkey's use was not recorded")
	}

	// With a passkey, the password is followed by the second step, where
	// the passkey answers.
	run(
		chromedp.Click(css("sign-out")),
		signInForm(tn.Email, tn.Password, "second-passkey"),
	)
	saveShot(t, ctx, "second-factor")
	run(
		chromedp.Click(css("second-passkey")),
		chromedp.WaitVisible(css("nav-settings")),
	)
}

func scalarInt(t *testing.T, srv *testkit.Server, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := srv.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// TestBrowserSecurityPages drives Settings → Security and the
// authenticator enrolment in Chromium: the pages render (screenshots with
// LINKQR_TEST_SCREENSHOTS), the QR code image loads, and a code typed
// from the secret on the page turns the factor on.
func TestBrowserSecurityPages(t *testing.T) {
	t.Parallel()
	ctx := testkit.Chromium(t)
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	run := runner(t, ctx)
	run(
		signInSteps(srv.URL, tn.Email, tn.Password),
		chromedp.Navigate(srv.URL+"/w/"+tn.WorkspaceExternalID()+"/settings/security"),
		chromedp.WaitVisible(css("sso-form")),
	)
	saveShot(t, ctx, "settings-security")
	run(
		chromedp.Navigate(srv.URL+"/account/two-factor"),
		chromedp.Click(css("totp-start")),
		chromedp.WaitVisible(css("totp-qr")),
	)
	// Visible is not loaded: the image arrives in a request of its own.
	wait.Until(t, 10*time.Second, func() (bool, string) {
		loaded, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('[data-testid="totp-qr"]').naturalWidth > 0`))
		return err == nil && loaded, fmt.Sprintf("the QR code image did not load (%v)", err)
	})
	saveShot(t, ctx, "totp-enrol")
	secret, err := chromedp.Run(ctx, chromedp.Value(css("totp-secret")))
	if err != nil {
		t.Fatal(err)
	}
	code, _ := totp.GenerateCode(secret, time.Now())
	run(
		chromedp.SendKeys(css("totp-confirm-code"), code),
		chromedp.Click(css("totp-confirm")),
		chromedp.WaitVisible(css("recovery-codes")),
	)
	saveShot(t, ctx, "recovery-codes")
	// The next sign-in asks for a code after the password.
	run(
		chromedp.Click(css("sign-out")),
		signInForm(tn.Email, tn.Password, "totp-code"),
	)
	saveShot(t, ctx, "second-factor-totp")
	next, _ := totp.GenerateCode(secret, time.Now().Add(30*time.Second))
	run(
		chromedp.SendKeys(css("totp-code"), next),
		chromedp.Click(css("totp-submit")),
		chromedp.WaitVisible(css("nav-settings")),
	)
}

// TestBrowserSSO is single sign-on in Chromium: the admin configures the
// provider in Settings → Security and verifies the domain; then a new
// person types only their address at /login, goes to the provider and
// back, and lands in the workspace as a member. The second-factor page
// with an authenticator is drawn too.
func TestBrowserSSO(t *testing.T) {
	t.Parallel()
	ctx := testkit.Chromium(t)
	dns := testkit.StartDNS(t)
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_DNS_RESOLVER", dns.Addr))
	idp := startProvider(t, nil)
	domain := "browser-sso.example"
	admin := "boss@" + domain
	res, err := srv.App.Accounts.Bootstrap(context.Background(), account.BootstrapInput{Email: admin, Password: password, Workspace: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	run := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			loc, _ := chromedp.Run(ctx, chromedp.Location())
			t.Fatalf("%v at %s", err, loc)
		}
	}
	run(
		signInSteps(srv.URL, admin, password),
		chromedp.Navigate(srv.URL+"/w/"+res.WorkspaceID+"/settings/security"),
		chromedp.SendKeys(css("sso-issuer"), idp.Issuer()),
		chromedp.SendKeys(css("sso-client-id"), idp.ClientID),
		chromedp.SendKeys(css("sso-client-secret"), idp.ClientSecret),
		chromedp.SendKeys(css("sso-domains"), domain),
		chromedp.Click(css("sso-save")),
		chromedp.WaitVisible(css("sso-domain-verify")),
	)
	saveShot(t, ctx, "settings-security-pending")
	value, err := chromedp.Run(ctx, chromedp.Text(css("sso-domain-value")))
	if err != nil {
		t.Fatal(err)
	}
	dns.SetTXT("_linkqr."+domain, strings.TrimSpace(value))
	run(
		chromedp.Click(css("sso-domain-verify")),
		chromedp.WaitNotPresent(css("sso-domain-verify")),
	)
	if status, _ := chromedp.Run(ctx, chromedp.Text(css("sso-domain-status"))); strings.TrimSpace(status) != "Verified" {
		t.Fatalf("domain status %q", status)
	}
	saveShot(t, ctx, "settings-security-verified")

	jane := "jane@" + domain
	idp.QueueUser(verifiedUser(jane))
	run(
		chromedp.Click(css("sign-out")),
		signInForm(jane, "", "nav-settings"),
	)
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || !strings.HasSuffix(loc, "/w/"+res.WorkspaceID+"/links") {
		t.Fatalf("after the provider: %q, %v", loc, err)
	}
	saveShot(t, ctx, "sso-signed-in")

	// A refused sign-in, as the person sees it.
	bad := verifiedUser(jane)
	bad.EmailVerified = false
	idp.QueueUser(bad)
	run(
		chromedp.Click(css("sign-out")),
		signInForm(jane, "", "error-page"),
	)
	saveShot(t, ctx, "sso-refused")
}
