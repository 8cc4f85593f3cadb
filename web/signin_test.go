package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
)

const badCredentials = "Incorrect e-mail address or password."

func TestSignInWrongPasswordAndUnknownUserLookAlike(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	b := newBrowser(t, srv)
	protected := "/w/" + tn.WorkspaceExternalID() + "/settings/api-keys"

	wrong := b.signIn(tn.Email, "not the password at all")
	unknown := b.signIn("nobody-"+tn.Email, "not the password at all")
	for name, p := range map[string]page{"wrong password": wrong, "unknown user": unknown} {
		if p.status != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, p.status)
		}
		if got := textOf(t, p.body, "signin-error"); got != badCredentials {
			t.Errorf("%s: message %q, want %q", name, got, badCredentials)
		}
	}
	if p := b.get(protected); p.status != http.StatusSeeOther || p.location != "/login" {
		t.Fatalf("after failed sign-ins the page is reachable: %d %q", p.status, p.location)
	}

	ok := b.signIn(tn.Email, tn.Password)
	if ok.status != http.StatusSeeOther || ok.location != protected {
		t.Fatalf("sign in: %d → %q, want 303 to the page that asked for it (%s)", ok.status, ok.location, protected)
	}
	if p := b.get(protected); p.status != http.StatusOK || !hasTestID(p.body, "keys-empty") {
		t.Fatalf("signed in: %d: %s", p.status, excerpt(p.body))
	}
}

func TestSignInThrottledPerAccount(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	srv.App.Accounts.SetClock(func() time.Time { return time.Unix(0, now.Load()) })
	b := newBrowser(t, srv)

	for i := range 5 {
		if p := b.signIn(tn.Email, "wrong password "+strconv.Itoa(i)); p.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d, want 401", i+1, p.status)
		}
		now.Add(int64(time.Second))
	}
	// The next attempt is refused whatever the password, even the right one,
	// and the address's case does not matter.
	for _, email := range []string{tn.Email, strings.ToUpper(tn.Email)} {
		p := b.signIn(email, tn.Password)
		if p.status != http.StatusTooManyRequests {
			t.Fatalf("%s with the right password after 5 failures: status %d, want 429", email, p.status)
		}
		if msg := textOf(t, p.body, "signin-error"); !strings.HasPrefix(msg, "Too many failed sign-in attempts.") || !strings.Contains(msg, "try again in 15 minutes") {
			t.Errorf("throttle message %q", msg)
		}
		if ra, err := strconv.Atoi(p.header.Get("Retry-After")); err != nil || ra < 1 || ra > 15*60 {
			t.Errorf("Retry-After %q", p.header.Get("Retry-After"))
		}
	}
	// Another account from the same address is not affected.
	other := testkit.NewTenant(t, srv.Pool)
	newBrowser(t, srv).mustSignIn(other.Email, other.Password)

	// Still refused just before the window ends; accepted once it has passed.
	now.Add(int64(15*time.Minute - 10*time.Second))
	if p := b.signIn(tn.Email, tn.Password); p.status != http.StatusTooManyRequests {
		t.Fatalf("inside the window: status %d, want 429", p.status)
	}
	now.Add(int64(15 * time.Second))
	b.mustSignIn(tn.Email, tn.Password)
}

func TestSignInThrottledPerIP(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	b := newBrowser(t, srv)
	// 20 failures spread over 5 addresses: no address reaches its own limit.
	for i := range 20 {
		email := "guess" + strconv.Itoa(i%5) + "@example.com"
		if p := b.signIn(email, "wrong password"); p.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d, want 401", i+1, p.status)
		}
	}
	p := b.signIn(tn.Email, tn.Password)
	if p.status != http.StatusTooManyRequests || !strings.HasPrefix(textOf(t, p.body, "signin-error"), "Too many failed sign-in attempts.") {
		t.Fatalf("21st attempt from one IP: status %d: %s", p.status, excerpt(p.body))
	}
}

func TestSignInFormAndSignedOutNotice(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	b := newBrowser(t, srv)
	p := b.get("/login")
	for _, id := range []string{"signin-email", "signin-password", "signin-submit"} {
		if !hasTestID(p.body, id) {
			t.Errorf("sign-in page lacks %s", id)
		}
	}
	if !strings.Contains(p.body, `<label for="email">`) || !strings.Contains(p.body, `<label for="password">`) {
		t.Error("sign-in inputs lack labels")
	}
	b.mustSignIn(tn.Email, tn.Password)
	if p := b.get("/login"); p.status != http.StatusSeeOther {
		t.Errorf("signed-in user on /login: status %d, want a redirect", p.status)
	}
	out := b.post("/logout", nil)
	if out.status != http.StatusSeeOther {
		t.Fatalf("sign out: status %d", out.status)
	}
	if p := b.follow(out); textOf(t, p.body, "signin-notice") != "You have been signed out." {
		t.Errorf("after sign-out: %s", excerpt(p.body))
	}
}

// Five wrong passwords from one IP do not lock the owner out: the right
// password from another IP signs in, and the guesser stays throttled.
func TestSignInLockoutIsPerAddressAndIP(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_TRUSTED_PROXIES", "127.0.0.1/32"))
	tn := testkit.NewTenant(t, srv.Pool)
	signIn := func(b *browser, from, pass string) page {
		t.Helper()
		return b.post("/login", url.Values{"email": {tn.Email}, "password": {pass}}, "X-Forwarded-For", from)
	}
	attacker, owner := newBrowser(t, srv), newBrowser(t, srv)
	for i := range 5 {
		if p := signIn(attacker, "203.0.113.7", "wrong password "+strconv.Itoa(i)); p.status != http.StatusUnauthorized {
			t.Fatalf("guess %d: status %d, want 401", i+1, p.status)
		}
	}
	if p := signIn(owner, "198.51.100.8", tn.Password); p.status != http.StatusSeeOther {
		t.Fatalf("the owner from another IP after 5 failures elsewhere: status %d: %s", p.status, excerpt(p.body))
	}
	p := signIn(attacker, "203.0.113.7", tn.Password)
	if p.status != http.StatusTooManyRequests || !strings.HasPrefix(textOf(t, p.body, "signin-error"), "Too many failed sign-in attempts.") {
		t.Fatalf("6th attempt from the guessing IP: status %d: %s", p.status, excerpt(p.body))
	}
}

func TestSignUpThrottledPerIP(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_TRUSTED_PROXIES", "127.0.0.1/32"))
	b := newBrowser(t, srv)
	signUp := func(from string) page {
		t.Helper()
		return b.post("/signup", url.Values{"email": {newEmail("many")}, "password": {password}, "workspace": {"W"}}, "X-Forwarded-For", from)
	}
	for i := range 10 {
		if p := signUp("192.0.2.44"); p.status != http.StatusSeeOther {
			t.Fatalf("sign-up %d: status %d: %s", i+1, p.status, excerpt(p.body))
		}
	}
	p := signUp("192.0.2.44")
	if p.status != http.StatusTooManyRequests {
		t.Fatalf("11th sign-up from one IP: status %d, want 429", p.status)
	}
	if msg := textOf(t, p.body, "signup-error"); !strings.HasPrefix(msg, "Too many sign-up attempts") {
		t.Errorf("throttle message %q", msg)
	}
	if ra, err := strconv.Atoi(p.header.Get("Retry-After")); err != nil || ra < 1 || ra > 15*60 {
		t.Errorf("Retry-After %q", p.header.Get("Retry-After"))
	}
	if p := signUp("192.0.2.45"); p.status != http.StatusSeeOther {
		t.Fatalf("from another IP: status %d", p.status)
	}
}
