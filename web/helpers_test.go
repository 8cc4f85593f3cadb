package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/session"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// browser is an HTTP client that behaves like a browser on linkqr's pages:
// it keeps cookies, sends the Fetch metadata a browser sends for a
// same-origin form post, and does not follow redirects, so tests see them.
type browser struct {
	t   *testing.T
	srv *testkit.Server
	c   *http.Client
	// host, when set, is the Host every request names, as a proxy in
	// front of a public LINKQR_BASE_URL forwards it.
	host string
}

func newBrowser(t *testing.T, srv *testkit.Server) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, srv: srv, c: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// signedIn starts a server with a new tenant signed in in a browser, and
// returns them with the tenant's workspace id ("ws_…").
func signedIn(t *testing.T) (*testkit.Server, testkit.Tenant, *browser, string) {
	t.Helper()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	b := newBrowser(t, srv)
	b.mustSignIn(tn.Email, tn.Password)
	return srv, tn, b, tn.WorkspaceExternalID()
}

// page is a response, read in full.
type page struct {
	status   int
	body     string
	header   http.Header
	location string
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	req.Header.Set("Accept", "text/html")
	if b.host != "" {
		req.Host = b.host
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, body: string(body), header: resp.Header, location: resp.Header.Get("Location")}
}

func (b *browser) get(path string) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.srv.URL+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

// post submits a form the way a browser does from one of linkqr's own
// pages; header pairs override or add headers (e.g. a cross-site origin).
func (b *browser) post(path string, form url.Values, header ...string) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(req)
}

// follow GETs the page a redirect points to.
func (b *browser) follow(p page) page {
	b.t.Helper()
	if p.status != http.StatusSeeOther && p.status != http.StatusFound {
		b.t.Fatalf("status %d, want a redirect: %s", p.status, excerpt(p.body))
	}
	return b.get(p.location)
}

func (b *browser) signIn(email, password string) page {
	b.t.Helper()
	return b.post("/login", url.Values{"email": {email}, "password": {password}})
}

// mustSignIn signs in and checks that it worked.
func (b *browser) mustSignIn(email, password string) {
	b.t.Helper()
	p := b.signIn(email, password)
	if p.status != http.StatusSeeOther {
		b.t.Fatalf("sign in as %s: status %d: %s", email, p.status, excerpt(p.body))
	}
}

// signUp creates an account through the form (which signs in) and returns
// its first workspace's "ws_…" id.
func (b *browser) signUp(email, password, workspace string) string {
	b.t.Helper()
	p := b.post("/signup", url.Values{"email": {email}, "password": {password}, "workspace": {workspace}})
	m := regexp.MustCompile(`^/w/(ws_[0-9a-z]+)/links$`).FindStringSubmatch(p.location)
	if p.status != http.StatusSeeOther || m == nil {
		b.t.Fatalf("sign up: status %d, location %q: %s", p.status, p.location, excerpt(p.body))
	}
	return m[1]
}

// signInHome signs in and returns the "ws_…" id of the workspace that home
// leads to (the first one, for a new session).
func (b *browser) signInHome(email, password string) string {
	b.t.Helper()
	b.mustSignIn(email, password)
	home := b.get("/")
	m := regexp.MustCompile(`^/w/(ws_[0-9a-z]+)/links$`).FindStringSubmatch(home.location)
	if home.status != http.StatusSeeOther || m == nil {
		b.t.Fatalf("home after sign-up: status %d, location %q: %s", home.status, home.location, excerpt(home.body))
	}
	return m[1]
}

// sessionCookie is the current value of the session cookie ("" if none).
func (b *browser) sessionCookie() string {
	u, _ := url.Parse(b.srv.URL)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == session.CookieName {
			return c.Value
		}
	}
	return ""
}

// setSessionCookie plants a session cookie value (an attacker's, say).
func (b *browser) setSessionCookie(v string) {
	u, _ := url.Parse(b.srv.URL)
	b.c.Jar.SetCookies(u, []*http.Cookie{{Name: session.CookieName, Value: v, Path: "/"}})
}

var userSeq atomic.Int64

// newEmail returns a fresh address.
func newEmail(prefix string) string {
	return fmt.Sprintf("%s%d@example.com", prefix, userSeq.Add(1))
}

const password = "correct horse battery staple"

// addMember makes member a member of admin's workspace with role, the one
// way there is: admin invites, member accepts (through the account service).
func addMember(t *testing.T, srv *testkit.Server, admin, member testkit.Tenant, role account.Role) {
	t.Helper()
	ctx := context.Background()
	inv, err := srv.App.Accounts.Invite(ctx, admin.WorkspaceID, &admin.UserID, member.Email, role)
	if err != nil {
		t.Fatalf("invite %s: %v", member.Email, err)
	}
	if _, err := srv.App.Accounts.AcceptInvitation(ctx, member.UserID, inv.ID); err != nil {
		t.Fatalf("%s accepts: %v", member.Email, err)
	}
}

// testID reports whether the page has an element with this data-testid.
func hasTestID(body, id string) bool {
	return strings.Contains(body, `data-testid="`+id+`"`)
}

// textOf returns the text of the first element with this data-testid whose
// content is plain text.
func textOf(t *testing.T, body, id string) string {
	t.Helper()
	m := regexp.MustCompile(`data-testid="` + regexp.QuoteMeta(id) + `"[^>]*>([^<]*)<`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no element with data-testid=%q in page: %s", id, excerpt(body))
	}
	return strings.TrimSpace(htmlUnescape(m[1]))
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&#34;", `"`, "&#39;", "'", "&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`).Replace(s)
}

var secretRE = regexp.MustCompile(`lqk_[0-9A-Za-z]{12}_[0-9A-Za-z]{32}`)

func excerpt(s string) string {
	if i := strings.Index(s, `<main`); i >= 0 {
		s = s[i:]
	}
	if len(s) > 1500 {
		s = s[:1500] + "…"
	}
	return s
}

// userID is the tenant's "usr_…" id.
func userID(tn testkit.Tenant) string { return id.Format(id.User, tn.UserID) }

// confirmed is the form of a destructive post whose confirmation was given
// (app.js adds it after confirm(); the confirmation page's button sends it).
var confirmed = url.Values{"confirmed": {"yes"}}
