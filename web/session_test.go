package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/session"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestSessionIDRegeneratedAtSignIn(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	protected := "/w/" + tn.WorkspaceExternalID() + "/settings/api-keys"

	// Visiting a page behind sign-in starts an anonymous session (it
	// remembers the page); an attacker who learns or plants that id…
	victim := newBrowser(t, srv)
	if p := victim.get(protected); p.status != http.StatusSeeOther || p.location != "/login" {
		t.Fatalf("signed out: %d %q", p.status, p.location)
	}
	before := victim.sessionCookie()
	if before == "" {
		t.Fatal("no session before sign-in")
	}
	attacker := newBrowser(t, srv)
	attacker.setSessionCookie(before)

	// …gains nothing when the victim signs in: the id changes,
	p := victim.signIn(tn.Email, tn.Password)
	if p.status != http.StatusSeeOther || p.location != protected {
		t.Fatalf("sign in: %d %q", p.status, p.location)
	}
	after := victim.sessionCookie()
	if after == "" || after == before {
		t.Fatalf("session cookie not replaced at sign-in (before %q, after %q)", before, after)
	}
	if p := victim.get(protected); p.status != http.StatusOK {
		t.Fatalf("victim signed in: %d", p.status)
	}
	// and the old id authenticates nothing.
	if p := attacker.get(protected); p.status != http.StatusSeeOther || p.location != "/login" {
		t.Fatalf("pre-sign-in session id still works: %d %q", p.status, p.location)
	}
	if p := attacker.get("/"); p.status != http.StatusOK || !hasTestID(p.body, "hero-signup") {
		t.Fatalf("pre-sign-in session id on /: %d", p.status)
	}
}

func TestSignOutEndsSessionEverywhere(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	protected := "/w/" + tn.WorkspaceExternalID() + "/links"
	b := newBrowser(t, srv)
	b.mustSignIn(tn.Email, tn.Password)
	copied := newBrowser(t, srv)
	copied.setSessionCookie(b.sessionCookie())
	if p := copied.get(protected); p.status != http.StatusOK {
		t.Fatalf("copied cookie before sign-out: %d", p.status)
	}
	// Sign-out is a POST: a link or an image elsewhere cannot sign anyone out.
	if p := b.get("/logout"); p.status == http.StatusOK || p.status == http.StatusSeeOther {
		t.Errorf("GET /logout: status %d", p.status)
	}
	if p := b.get(protected); p.status != http.StatusOK {
		t.Fatalf("GET /logout ended the session: %d", p.status)
	}
	if p := b.post("/logout", nil); p.status != http.StatusSeeOther {
		t.Fatalf("sign out: %d", p.status)
	}
	if b.sessionCookie() != "" {
		t.Error("session cookie not cleared")
	}
	for name, c := range map[string]*browser{"browser": b, "copied cookie": copied} {
		if p := c.get(protected); p.status != http.StatusSeeOther || p.location != "/login" {
			t.Errorf("%s after sign-out: %d %q", name, p.status, p.location)
		}
	}
}

func TestSessionCookieAttributes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		base   string
		secure bool
	}{{"", false}, {"https://linkqr.example", true}} {
		var opts []testkit.ServerOption
		if tc.base != "" {
			opts = append(opts, testkit.WithEnv("LINKQR_BASE_URL", tc.base))
		}
		srv := testkit.StartServer(t, opts...)
		tn := testkit.NewTenant(t, srv.Pool)
		b := newBrowser(t, srv)
		if u, _ := url.Parse(tc.base); tc.base != "" {
			b.host = u.Host
		}
		p := b.post("/login", url.Values{"email": {tn.Email}, "password": {tn.Password}})
		if p.status != http.StatusSeeOther {
			t.Fatalf("base %q: sign in: %d", tc.base, p.status)
		}
		resp := http.Response{Header: p.header}
		var c *http.Cookie
		for _, k := range resp.Cookies() {
			if k.Name == session.CookieName {
				c = k
			}
		}
		if c == nil {
			t.Fatalf("base %q: no session cookie set", tc.base)
		}
		if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure != tc.secure || c.Path != "/" {
			t.Errorf("base %q: cookie %s: want HttpOnly, SameSite=Lax, Secure=%v, Path=/", tc.base, c.String(), tc.secure)
		}
		// The cookie holds a signed random id, not the user.
		if strings.Contains(c.Value, tn.UserID.String()) || len(c.Value) < 40 {
			t.Errorf("base %q: cookie value %q", tc.base, c.Value)
		}
	}
}

func TestTamperedSessionCookieIsIgnored(t *testing.T) {
	t.Parallel()
	srv, tn, b, _ := signedIn(t)
	v := []byte(b.sessionCookie())
	v[len(v)/2] ^= 1
	forged := newBrowser(t, srv)
	forged.setSessionCookie(string(v))
	if p := forged.get("/w/" + tn.WorkspaceExternalID() + "/links"); p.status != http.StatusSeeOther || p.location != "/login" {
		t.Fatalf("tampered cookie: %d %q", p.status, p.location)
	}
}
