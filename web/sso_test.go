package web_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/testkit"
)

// The identity provider of these tests is oauth2-proxy/mockoidc running in
// the test process: discovery, JWKS, authorization code with PKCE, a token
// endpoint that checks the client's secret, and RS256-signed ID tokens.
// What a test breaks in a token it breaks through the provider's own user
// hook (the claims it signs) or by serving a JWKS without the signing key.

// tokenUser is a provider user whose ID token claims a test may alter.
type tokenUser struct {
	mockoidc.MockUser
	tamper func(*mockoidc.IDTokenClaims)
}

func (u *tokenUser) Claims(scope []string, c *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	if u.tamper != nil {
		u.tamper(c)
	}
	return u.MockUser.Claims(scope, c)
}

// startProvider runs a provider; jwks, when set, replaces what its JWKS
// endpoint answers.
func startProvider(t *testing.T, jwks []byte) *mockoidc.MockOIDC {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	if jwks != nil {
		_ = m.AddMiddleware(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == mockoidc.JWKSEndpoint {
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write(jwks)
					return
				}
				next.ServeHTTP(w, r)
			})
		})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return m
}

// ssoRig is a workspace whose admin (an address at the SSO domain) has
// configured single sign-on with a provider and verified the domain.
type ssoRig struct {
	srv        *testkit.Server
	idp        *mockoidc.MockOIDC
	domain     string
	admin      *browser
	ws         string // "ws_…"
	adminEmail string
}

var ssoSeq int

func newSSORig(t *testing.T, jwks []byte) *ssoRig {
	t.Helper()
	dns := testkit.StartDNS(t)
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_DNS_RESOLVER", dns.Addr))
	ssoSeq++
	domain := fmt.Sprintf("acme%d-%d.example", ssoSeq, time.Now().UnixNano()%100000)
	r := &ssoRig{srv: srv, idp: startProvider(t, jwks), domain: domain, adminEmail: "boss@" + domain}
	res, err := srv.App.Accounts.Bootstrap(context.Background(), account.BootstrapInput{Email: r.adminEmail, Password: password, Workspace: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	r.ws = res.WorkspaceID
	r.admin = newBrowser(t, srv)
	r.admin.mustSignIn(r.adminEmail, password)
	r.configure(t, false)
	p := r.admin.get("/w/" + r.ws + "/settings/security")
	value := textOf(t, p.body, "sso-domain-value")
	dns.SetTXT("_linkqr."+domain, value)
	v := r.admin.post("/w/"+r.ws+"/settings/security/sso/domains/"+domain+"/verify", nil)
	if v.status != http.StatusSeeOther {
		t.Fatalf("verify: %d %s", v.status, excerpt(v.body))
	}
	if p := r.admin.follow(v); textOf(t, p.body, "sso-domain-status") != "Verified" {
		t.Fatalf("the domain is not verified: %s", excerpt(p.body))
	}
	return r
}

// configure saves the connection through Settings → Security.
func (r *ssoRig) configure(t *testing.T, required bool) {
	t.Helper()
	form := url.Values{"issuer": {r.idp.Issuer()}, "client_id": {r.idp.ClientID}, "client_secret": {r.idp.ClientSecret},
		"domains": {r.domain}, "default_role": {"member"}}
	if required {
		form.Set("required", "on")
		form.Del("client_secret") // kept
	}
	p := r.admin.post("/w/"+r.ws+"/settings/security/sso", form)
	if p.status != http.StatusSeeOther {
		t.Fatalf("save SSO: %d %s", p.status, excerpt(p.body))
	}
}

// signInThroughProvider goes from /login (address only) to the provider
// and back; it returns the answer of linkqr's callback.
func (r *ssoRig) signInThroughProvider(t *testing.T, b *browser, email string, user mockoidc.User) page {
	t.Helper()
	r.idp.QueueUser(user)
	start := b.signIn(email, "")
	to, found := strings.CutPrefix(start.header.Get("Refresh"), "0; url=")
	if start.status != http.StatusOK || !found || !strings.HasPrefix(to, r.idp.AuthorizationEndpoint()) || !hasTestID(start.body, "sso-continue") {
		t.Fatalf("/login sent %s to %d %q, want the provider: %s", email, start.status, start.header.Get("Refresh"), excerpt(start.body))
	}
	start.location = to
	auth, _ := url.Parse(start.location)
	q := auth.Query()
	for _, k := range []string{"state", "nonce", "code_challenge"} {
		if q.Get(k) == "" {
			t.Errorf("the authorization request has no %s: %s", k, start.location)
		}
	}
	if q.Get("code_challenge_method") != "S256" || q.Get("redirect_uri") != r.srv.URL+"/login/sso/callback" {
		t.Errorf("authorization request %s", start.location)
	}
	req, _ := http.NewRequest(http.MethodGet, start.location, nil)
	back := b.do(req)
	if back.status != http.StatusFound || !strings.HasPrefix(back.location, r.srv.URL+"/login/sso/callback?") {
		t.Fatalf("the provider answered %d %q", back.status, back.location)
	}
	req, _ = http.NewRequest(http.MethodGet, back.location, nil)
	return b.do(req)
}

func verifiedUser(email string) *tokenUser {
	return &tokenUser{MockUser: mockoidc.MockUser{Subject: "sub-" + email, Email: email, EmailVerified: true}}
}

// TestSSOSignInCreatesMemberThenRequired: an address at the verified
// domain signs in through the provider with the e-mail field alone; the
// first sign-in creates the account and the membership with the default
// role; once SSO is required, a password sign-in of that address is
// refused while the admin who required it (break-glass) still signs in
// with their password.
func TestSSOSignInCreatesMemberThenRequired(t *testing.T) {
	t.Parallel()
	r := newSSORig(t, nil)
	email := "jane@" + r.domain
	b := newBrowser(t, r.srv)
	done := r.signInThroughProvider(t, b, email, verifiedUser(email))
	if done.status != http.StatusSeeOther || done.location != "/w/"+r.ws+"/links" {
		t.Fatalf("callback: %d %q %s", done.status, done.location, excerpt(done.body))
	}
	if p := b.get("/w/" + r.ws + "/links"); p.status != http.StatusOK {
		t.Fatalf("the new member's links page: %d", p.status)
	}
	var role string
	if err := r.srv.Pool.QueryRow(context.Background(),
		`SELECT m.role FROM memberships m JOIN users u ON u.id = m.user_id WHERE lower(u.email) = lower($1)`, email).Scan(&role); err != nil || role != "member" {
		t.Fatalf("membership of %s: %q, %v", email, role, err)
	}
	// Signing in again finds the same account.
	b2 := newBrowser(t, r.srv)
	if again := r.signInThroughProvider(t, b2, email, verifiedUser(email)); again.status != http.StatusSeeOther {
		t.Fatalf("second sign-in: %d %s", again.status, excerpt(again.body))
	}
	var users int
	_ = r.srv.Pool.QueryRow(context.Background(), `SELECT count(*) FROM users WHERE lower(email) = lower($1)`, email).Scan(&users)
	if users != 1 {
		t.Fatalf("%d accounts for %s", users, email)
	}

	r.configure(t, true)
	// jane's account has a random password; a reset could give her one:
	// set one directly to prove the refusal is not about a wrong password.
	if _, err := r.srv.Pool.Exec(context.Background(), `UPDATE users SET password_hash = (SELECT password_hash FROM users WHERE lower(email) = lower($1)) WHERE lower(email) = lower($2)`, r.adminEmail, email); err != nil {
		t.Fatal(err)
	}
	refused := newBrowser(t, r.srv).signIn(email, password)
	if refused.status != http.StatusForbidden || !strings.Contains(refused.body, "single sign-on") {
		t.Fatalf("password sign-in of %s once SSO is required: %d %s", email, refused.status, excerpt(refused.body))
	}
	newBrowser(t, r.srv).mustSignIn(r.adminEmail, password) // the break-glass admin

	// Audit: the configuration changes and the verification are sso.updated.
	var n int
	_ = r.srv.Pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_events WHERE action = 'sso.updated' AND changes::text NOT LIKE '%`+r.idp.ClientSecret+`%'`).Scan(&n)
	if n < 3 {
		t.Errorf("%d sso.updated entries (without the secret), want at least 3", n)
	}
}

// TestSSOBrokenTokens: each check on the ID token is proven by a token
// that breaks it; the sign-in fails with a page that says why, and the
// refusal is logged.
func TestSSOBrokenTokens(t *testing.T) {
	t.Parallel()
	otherKey, err := mockoidc.RandomKeypair(2048)
	if err != nil {
		t.Fatal(err)
	}
	foreignJWKS, err := otherKey.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		jwks       []byte
		tamper     func(*mockoidc.IDTokenClaims)
		unverified bool
		other      bool
		want       string
	}{
		{name: "wrong audience", tamper: func(c *mockoidc.IDTokenClaims) { c.Audience = jwt.ClaimStrings{"someone-else"} }, want: "wrong audience"},
		{name: "expired", tamper: func(c *mockoidc.IDTokenClaims) {
			c.IssuedAt = jwt.NewNumericDate(time.Now().Add(-2 * time.Hour))
			c.NotBefore = c.IssuedAt
			c.ExpiresAt = jwt.NewNumericDate(time.Now().Add(-time.Hour))
		}, want: "has expired"},
		{name: "bad nonce", tamper: func(c *mockoidc.IDTokenClaims) { c.Nonce = "not-the-nonce-we-sent" }, want: "nonce does not match"},
		{name: "unverified e-mail", unverified: true, want: "has not verified the e-mail address"},
		{name: "unknown key", jwks: foreignJWKS, want: "signature does not verify"},
		// Not one of the five token checks: the provider vouches for an
		// address the workspace has not proven it owns.
		{name: "address at another domain", other: true, want: "not at a verified domain of this workspace"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newSSORig(t, c.jwks)
			email := "mallory@" + r.domain
			u := verifiedUser(email)
			u.tamper = c.tamper
			u.EmailVerified = !c.unverified
			if c.other {
				u.Email = "mallory@gmail.example"
			}
			p := r.signInThroughProvider(t, newBrowser(t, r.srv), email, u)
			if p.status != http.StatusUnauthorized || !strings.Contains(htmlUnescape(p.body), c.want) || !hasTestID(p.body, "error-page") {
				t.Fatalf("callback: %d, want 401 saying %q: %s", p.status, c.want, excerpt(p.body))
			}
			if !regexp.MustCompile(`msg="sso sign-in refused".*reason="[^"]*` + regexp.QuoteMeta(c.want)).MatchString(r.srv.Logs()) {
				t.Errorf("the refusal is not logged with its reason %q", c.want)
			}
			var users int
			_ = r.srv.Pool.QueryRow(context.Background(), `SELECT count(*) FROM users WHERE lower(email) = lower($1)`, email).Scan(&users)
			if users != 0 {
				t.Errorf("an account was created for %s", email)
			}
		})
	}
}
