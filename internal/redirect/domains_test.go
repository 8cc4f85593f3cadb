package redirect_test

import (
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
)

// domainFixture: a server whose domain verification asks dns, custom
// domains' short URLs in http (as the test reaches them), and two
// workspaces, each with a token.
type domainFixture struct {
	srv        *testkit.Server
	dns        *testkit.DNSServer
	a, b       string // tokens
	aWS, bWS   testkit.Tenant
	acme, beta string // verified hostnames: acme of a, beta of b
}

func newDomainFixture(t *testing.T) *domainFixture {
	t.Helper()
	dnsSrv := testkit.StartDNS(t)
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_DNS_RESOLVER", dnsSrv.Addr),
		testkit.WithEnv("LINKQR_CUSTOM_DOMAIN_SCHEME", "http"))
	f := &domainFixture{srv: srv, dns: dnsSrv, aWS: testkit.NewTenant(t, srv.Pool), bWS: testkit.NewTenant(t, srv.Pool),
		acme: "go.acme.com", beta: "go.beta.example"}
	f.a, f.b = srv.APIKey(t, f.aWS.WorkspaceID), srv.APIKey(t, f.bWS.WorkspaceID)
	srv.VerifiedDomain(t, dnsSrv, f.a, f.acme)
	srv.VerifiedDomain(t, dnsSrv, f.b, f.beta)
	return f
}

func (f *domainFixture) create(t *testing.T, token, body string) map[string]any {
	t.Helper()
	return testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links", token, body), 201)
}

// onHost sends method path to the server with Host: host and returns the
// response with its body read.
func (f *domainFixture) onHost(t *testing.T, method, host, path string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// expect checks a redirect answer: status, and Location for a 302.
func (f *domainFixture) expect(t *testing.T, host, path string, status int, location string) {
	t.Helper()
	resp, _ := f.onHost(t, "GET", host, path)
	if resp.StatusCode != status || resp.Header.Get("Location") != location {
		t.Errorf("GET %s%s: %d → %q, want %d → %q", host, path, resp.StatusCode, resp.Header.Get("Location"), status, location)
	}
}

func TestLinksOnCustomDomains(t *testing.T) {
	t.Parallel()
	f := newDomainFixture(t)
	def := strings.TrimPrefix(f.srv.URL, "http://")

	// The same code on three domains: three links, three targets.
	onAcme := f.create(t, f.a, `{"target_url":"https://acme.com/menu","code":"menu","domain":"Go.ACME.com"}`)
	onDefault := f.create(t, f.a, `{"target_url":"https://example.com/menu","code":"menu"}`)
	onBeta := f.create(t, f.b, `{"target_url":"https://beta.example/menu","code":"menu","domain":"go.beta.example"}`)
	if onAcme["domain"] != "go.acme.com" || onAcme["short_url"] != "http://go.acme.com/menu" ||
		onDefault["domain"] != nil || onDefault["short_url"] != f.srv.URL+"/menu" || onBeta["short_url"] != "http://go.beta.example/menu" {
		t.Fatalf("created %v, %v, %v", onAcme, onDefault, onBeta)
	}
	f.expect(t, f.acme, "/menu", 302, "https://acme.com/menu")
	f.expect(t, "GO.acme.com.:8080", "/menu", 302, "https://acme.com/menu") // any case, port, trailing dot
	resp := f.srv.Do(t, "GET", "/api/v1/links/"+onAcme["id"].(string)+"/qr", f.a, "")
	img, err := png.Decode(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := testkit.DecodeQR(t, img); got != "http://go.acme.com/menu?qr=1" {
		t.Errorf("the QR code encodes %q", got)
	}
	f.expect(t, def, "/menu", 302, "https://example.com/menu")
	f.expect(t, f.beta, "/menu", 302, "https://beta.example/menu")

	// A code on a domain redirects only with that Host.
	only := f.create(t, f.a, `{"target_url":"https://acme.com/only","code":"only-here","domain":"go.acme.com"}`)
	f.expect(t, f.acme, "/only-here", 302, "https://acme.com/only")
	f.expect(t, def, "/only-here", 404, "")
	f.expect(t, f.beta, "/only-here", 404, "")
	// Any other host has no codes at all, nor anything else but health
	// probes; the machine's own names are the default domain's.
	for _, host := range []string{"unknown.example", "go.pending.example", "10.1.2.3:8080"} {
		for _, path := range []string{"/menu", "/", "/signin", "/api/v1/links"} {
			f.expect(t, host, path, 404, "")
		}
		f.expect(t, host, "/healthz", 200, "")
	}
	f.expect(t, "localhost", "/menu", 302, "https://example.com/menu")

	// HEAD answers alike and counts no scan; GET counts one.
	if resp, _ := f.onHost(t, "HEAD", f.acme, "/only-here"); resp.StatusCode != 302 || resp.Header.Get("Location") != "https://acme.com/only" {
		t.Errorf("HEAD: %d %v", resp.StatusCode, resp.Header)
	}
	id := only["id"].(string)
	testkit.Eventually(t, 10*time.Second, func() bool {
		scans := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links/"+id+"/scans", f.a, ""), 200)
		return len(scans["data"].([]any)) == 1
	}, "the GET on the custom domain recorded as its link's one scan")

	// Re-pointing a code on a domain is seen by the next redirect.
	testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/links/"+id, f.a, `{"target_url":"https://acme.com/new"}`), 200)
	f.expect(t, f.acme, "/only-here", 302, "https://acme.com/new")

	// Codes are unique per domain; reserved paths are codes like any
	// other on a custom domain, which serves nothing else.
	testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/links", f.a, `{"target_url":"https://acme.com/x","code":"menu","domain":"go.acme.com"}`), 409, "conflict")
	f.create(t, f.a, `{"target_url":"https://acme.com/docs","code":"docs","domain":"go.acme.com"}`)
	f.expect(t, f.acme, "/docs", 302, "https://acme.com/docs")
	p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/links", f.a, `{"target_url":"https://acme.com/x","code":"docs"}`), 422, "validation-failed")
	if !strings.Contains(p["errors"].([]any)[0].(map[string]any)["pointer"].(string), "/code") {
		t.Errorf("reserved on the default domain: %v", p)
	}

	// The request metrics label a custom domain's codes with the route
	// the default domain's have: the eight GETs answered 302 above (six
	// of them on custom domains) are all /{code}'s.
	resp = testkit.Get(t, f.srv.MetricsURL+"/metrics", nil)
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `linkqr_http_requests_total{code="302",method="GET",route="/{code}"} 8`; !strings.Contains(string(metrics), want) {
		t.Errorf("metrics lack %s:\n%s", want, grepLines(string(metrics), "linkqr_http_requests_total"))
	}
}

// grepLines returns the lines of text that contain s.
func grepLines(text, s string) string {
	var out []string
	for line := range strings.Lines(text) {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

func TestLinkDomainMustBeAVerifiedDomainOfTheWorkspace(t *testing.T) {
	t.Parallel()
	f := newDomainFixture(t)
	testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/domains", f.a, `{"hostname":"go.pending.example"}`), 201)
	for body, detail := range map[string]string{
		`{"target_url":"https://x.example/","domain":"go.pending.example"}`: "must be a verified domain of this workspace",
		`{"target_url":"https://x.example/","domain":"go.beta.example"}`:    "must be a verified domain of this workspace", // b's
		`{"target_url":"https://x.example/","domain":"never.example"}`:      "must be a verified domain of this workspace",
		`{"target_url":"https://x.example/","domain":"not a host"}`:         "must be a bare hostname",
		`{"target_url":"https://x.example/","domain":42}`:                   "must be a string",
	} {
		p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/links", f.a, body), 422, "validation-failed")
		e := p["errors"].([]any)[0].(map[string]any)
		if e["pointer"] != "/domain" || !strings.Contains(e["detail"].(string), detail) {
			t.Errorf("%s: %v", body, p)
		}
	}
	list := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links", f.a, ""), 200)
	if data := list["data"].([]any); len(data) != 0 {
		t.Errorf("refused creates left %d links", len(data))
	}
}

func TestListLinksByDomain(t *testing.T) {
	t.Parallel()
	f := newDomainFixture(t)
	acme := f.create(t, f.a, `{"target_url":"https://acme.com/1","domain":"go.acme.com","title":"spring"}`)
	f.create(t, f.a, `{"target_url":"https://acme.com/2"}`)
	f.create(t, f.b, `{"target_url":"https://beta.example/1","domain":"go.beta.example"}`)
	ids := func(token, query string) []string {
		t.Helper()
		var out []string
		for _, l := range testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links?"+query, token, ""), 200)["data"].([]any) {
			out = append(out, l.(map[string]any)["id"].(string))
		}
		return out
	}
	if got := ids(f.a, "domain=GO.acme.com"); len(got) != 1 || got[0] != acme["id"] {
		t.Errorf("a's links on go.acme.com: %v", got)
	}
	if got := ids(f.a, "domain=go.acme.com&q=spring&status=active"); len(got) != 1 || got[0] != acme["id"] {
		t.Errorf("searched on go.acme.com: %v", got)
	}
	if got := ids(f.b, "domain=go.acme.com"); len(got) != 0 {
		t.Errorf("b sees links on a's domain: %v", got)
	}
	p := testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links?domain=1.2.3.4", f.a, ""), 422, "validation-failed")
	if p["errors"].([]any)[0].(map[string]any)["pointer"] != "/query/domain" {
		t.Errorf("bad domain filter: %v", p)
	}
}

func TestCustomDomainRootNotFoundAndNothingElse(t *testing.T) {
	t.Parallel()
	f := newDomainFixture(t)
	// A second instance on the same database must see domain changes at
	// once too, as it sees a re-pointed code.
	other := testkit.StartServer(t, testkit.WithPool(f.srv.Pool), testkit.WithEnv("LINKQR_BASE_URL", f.srv.URL),
		testkit.WithEnv("LINKQR_DNS_RESOLVER", f.dns.Addr))
	second := &domainFixture{srv: other}

	domains := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/domains", f.a, ""), 200)["data"].([]any)
	id := domains[0].(map[string]any)["id"].(string)
	for _, fx := range []*domainFixture{f, second} {
		fx.expect(t, f.acme, "/", 404, "")
		fx.expect(t, f.acme, "/no-such-code", 404, "")
	}
	testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/domains/"+id, f.a, `{"root_url":"https://acme.com/","not_found_url":"https://acme.com/404"}`), 200)
	f.expect(t, f.acme, "/", 302, "https://acme.com/")
	f.expect(t, f.acme, "/no-such-code", 302, "https://acme.com/404")
	f.expect(t, f.acme, "/a.b", 302, "https://acme.com/404") // no code can look like this
	testkit.Eventually(t, 5*time.Second, func() bool {
		resp, _ := second.onHost(t, "GET", f.acme, "/")
		return resp.Header.Get("Location") == "https://acme.com/"
	}, "the other instance sends / to the new root URL")
	second.expect(t, f.acme, "/no-such-code", 302, "https://acme.com/404")

	// No UI, API or docs on a custom domain (a single segment is a code),
	// and never a cookie.
	for _, path := range []string{"/settings", "/signin", "/signup", "/docs", "/openapi.json", "/healthz"} {
		f.expect(t, f.acme, path, 302, "https://acme.com/404")
	}
	for _, path := range []string{"/api/v1/links", "/menu/x", "/w/x/links", "/docs/", "/.well-known/linkqr/tls-allowed"} {
		if resp, body := f.onHost(t, "GET", f.acme, path); resp.StatusCode != 404 || strings.Contains(body, "Sign in") {
			t.Errorf("GET %s on a custom domain: %d", path, resp.StatusCode)
		}
	}
	if resp, _ := f.onHost(t, "GET", f.acme, "/static/css/app.css"); resp.StatusCode != 200 {
		t.Errorf("the 404 page's stylesheet: %d", resp.StatusCode)
	}
	for _, method := range []string{"GET", "HEAD", "POST"} {
		for _, path := range []string{"/", "/no-such-code", "/signin", "/api/v1/links"} {
			if resp, _ := f.onHost(t, method, f.acme, path); len(resp.Header.Values("Set-Cookie")) > 0 {
				t.Errorf("%s %s on a custom domain set a cookie: %v", method, path, resp.Header.Values("Set-Cookie"))
			}
		}
	}
	if resp, _ := f.onHost(t, "POST", f.acme, "/menu"); resp.StatusCode != 404 {
		t.Errorf("POST to a code: %d", resp.StatusCode)
	}

	// Removed: the host is nobody's, on every instance: not even the UI
	// answers there.
	if resp := f.srv.Do(t, "DELETE", "/api/v1/domains/"+id, f.a, ""); resp.StatusCode != 204 {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	f.expect(t, f.acme, "/", 404, "")
	f.expect(t, f.acme, "/signin", 404, "")
	testkit.Eventually(t, 5*time.Second, func() bool {
		resp, _ := second.onHost(t, "GET", f.acme, "/")
		return resp.StatusCode == 404
	}, "the other instance forgets the removed domain")
}

func TestTLSAllowed(t *testing.T) {
	t.Parallel()
	f := newDomainFixture(t)
	testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/domains", f.a, `{"hostname":"go.pending.example"}`), 201)
	for host, want := range map[string]int{
		"go.acme.com": 200, "GO.Acme.COM": 200, "go.beta.example": 200,
		"go.pending.example": 404, "unknown.example": 404, "": 404, "127.0.0.1": 404,
	} {
		resp, _ := f.onHost(t, "GET", strings.TrimPrefix(f.srv.URL, "http://"), "/.well-known/linkqr/tls-allowed?domain="+host)
		if resp.StatusCode != want {
			t.Errorf("tls-allowed %q: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// A code stays taken on its hostname after its domain is removed and the
// name is verified again, by its workspace or another: printed codes
// never lead somewhere new.
func TestCodesOfARemovedDomainAreNeverReused(t *testing.T) {
	t.Parallel()
	f := newDomainFixture(t)
	l := f.create(t, f.a, `{"target_url":"https://acme.com/menu","code":"menu","domain":"go.acme.com"}`)
	if resp := f.srv.Do(t, "DELETE", "/api/v1/links/"+l["id"].(string), f.a, ""); resp.StatusCode != 204 {
		t.Fatal(resp.StatusCode)
	}
	d := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/domains", f.a, ""), 200)["data"].([]any)
	for _, x := range d {
		if x.(map[string]any)["hostname"] == "go.acme.com" {
			if resp := f.srv.Do(t, "DELETE", "/api/v1/domains/"+x.(map[string]any)["id"].(string), f.a, ""); resp.StatusCode != 204 {
				t.Fatal(resp.StatusCode)
			}
		}
	}
	f.srv.VerifiedDomain(t, f.dns, f.b, "go.acme.com")
	testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/links", f.b, `{"target_url":"https://b.example/","code":"menu","domain":"go.acme.com"}`), 409, "conflict")
	f.expect(t, f.acme, "/menu", 410, "")
}
