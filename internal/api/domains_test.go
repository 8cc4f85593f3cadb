package api_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/testkit"
)

// domainsFixture is a server whose DNS verification asks dns, with two
// workspaces.
type domainsFixture struct {
	*linksFixture
	dns *testkit.DNSServer
}

func newDomainsFixture(t *testing.T) domainsFixture {
	t.Helper()
	dnsSrv := testkit.StartDNS(t)
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_DNS_RESOLVER", dnsSrv.Addr),
		testkit.WithEnv("LINKQR_SHORT_BASE_URL", "http://qr.example.net"))
	f := &linksFixture{srv: srv, tenant: testkit.NewTenant(t, srv.Pool), other: testkit.NewTenant(t, srv.Pool)}
	f.token = srv.APIKey(t, f.tenant.WorkspaceID)
	f.otherTk = srv.APIKey(t, f.other.WorkspaceID)
	return domainsFixture{f, dnsSrv}
}

func (f domainsFixture) add(t *testing.T, token, hostname string) map[string]any {
	t.Helper()
	return testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/domains", token, `{"hostname":"`+hostname+`"}`), 201)
}

func TestDomainLifecycle(t *testing.T) {
	t.Parallel()
	f := newDomainsFixture(t)
	resp := f.srv.Do(t, "POST", "/api/v1/domains", f.token, `{"hostname":"Go.Acme.com."}`)
	loc := resp.Header.Get("Location")
	d := testkit.JSON(t, resp, 201)
	id, _ := d["id"].(string)
	v, _ := d["verification"].(map[string]any)
	value, _ := v["value"].(string)
	if !strings.HasPrefix(id, "dom_") || loc != f.srv.URL+"/api/v1/domains/"+id || d["hostname"] != "go.acme.com" ||
		d["status"] != "pending" || d["verified_at"] != nil || v["type"] != "TXT" || v["name"] != "_linkqr.go.acme.com" ||
		!strings.HasPrefix(value, "linkqr-verification=") || d["workspace_id"] != f.tenant.WorkspaceExternalID() {
		t.Fatalf("created %v, Location %q", d, loc)
	}

	p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/domains/"+id+"/verify", f.token, ""), 422, "domain-not-verified")
	if p["detail"] != "no TXT record at _linkqr.go.acme.com; create one with the value "+value {
		t.Errorf("no record: %v", p["detail"])
	}
	f.dns.SetTXT("_linkqr.go.acme.com", "linkqr-verification=0000")
	p = testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/domains/"+id+"/verify", f.token, "{}"), 422, "domain-not-verified")
	if p["detail"] != `found "linkqr-verification=0000" at _linkqr.go.acme.com, expected "`+value+`"` {
		t.Errorf("wrong record: %v", p["detail"])
	}
	if got := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/domains/"+id, f.token, ""), 200); got["status"] != "pending" {
		t.Errorf("after a failed verification: %v", got)
	}
	f.dns.SetTXT("_linkqr.go.acme.com", "linkqr-verification=0000", value)
	ok := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/domains/"+id+"/verify", f.token, ""), 200)
	if ok["status"] != "verified" || ok["verified_at"] == nil {
		t.Fatalf("verified %v", ok)
	}

	u := testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/domains/"+id, f.token, `{"root_url":"https://acme.com","not_found_url":"https://acme.com/404"}`), 200)
	if u["root_url"] != "https://acme.com" || u["not_found_url"] != "https://acme.com/404" || u["status"] != "verified" {
		t.Errorf("patched %v", u)
	}
	u = testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/domains/"+id, f.token, `{"root_url":null}`), 200)
	if u["root_url"] != nil || u["not_found_url"] != "https://acme.com/404" {
		t.Errorf("cleared root_url: %v", u)
	}

	list := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/domains?limit=1", f.token, ""), 200)
	if data, _ := list["data"].([]any); len(data) != 1 || list["has_more"] != false || list["next_cursor"] != nil {
		t.Errorf("list %v", list)
	}

	// Another workspace can neither add nor verify the verified hostname.
	p = testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/domains", f.otherTk, `{"hostname":"go.acme.com"}`), 409, "conflict")
	if p["detail"] != "this hostname is verified by another workspace" {
		t.Errorf("taken: %v", p["detail"])
	}
	testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/domains", f.token, `{"hostname":"GO.ACME.COM"}`), 409, "conflict")

	if resp := f.srv.Do(t, "DELETE", "/api/v1/domains/"+id, f.token, ""); resp.StatusCode != 204 {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/domains/"+id, f.token, ""), 404, "not-found")
	// Once removed, the hostname is free for another workspace.
	f.add(t, f.otherTk, "go.acme.com")
}

func TestDomainVerifiedByAnotherWorkspaceFirst(t *testing.T) {
	t.Parallel()
	f := newDomainsFixture(t)
	mine := f.add(t, f.token, "go.acme.com")
	theirs := f.add(t, f.otherTk, "go.acme.com") // both pending: allowed
	value := func(d map[string]any) string { return d["verification"].(map[string]any)["value"].(string) }
	f.dns.SetTXT("_linkqr.go.acme.com", value(mine), value(theirs))
	testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/domains/"+theirs["id"].(string)+"/verify", f.otherTk, ""), 200)
	p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/domains/"+mine["id"].(string)+"/verify", f.token, ""), 409, "conflict")
	if p["detail"] != "this hostname is verified by another workspace" {
		t.Errorf("detail %v", p["detail"])
	}
}

func TestDomainHostnameValidation(t *testing.T) {
	t.Parallel()
	f := newDomainsFixture(t)
	host := strings.TrimPrefix(f.srv.URL, "http://")
	host = host[:strings.LastIndex(host, ":")]
	cases := map[string]string{
		`{"hostname":"com"}`:                                 "hostname must have at least two labels, such as go.example.com",
		`{"hostname":"10.0.0.1"}`:                            "hostname must be a hostname, not an IP address",
		`{"hostname":"https://go.acme.com"}`:                 "hostname must be a bare hostname, without scheme, port, path or spaces",
		`{"hostname":"go_x.acme.com"}`:                       "hostname must be a valid hostname: letters, digits and hyphens in dot-separated labels",
		`{"hostname":"` + strings.Repeat("a.", 127) + `io"}`: "hostname must be at most 253 bytes long",
		`{"hostname":"qr.example.net"}`:                      "hostname is this service's own hostname, not a custom domain",
		`{"hostname":"` + host + `x.example"}`:               "",
		`{"hostname":""}`:                                    "hostname must be a hostname such as go.example.com",
		`{"hostname":7}`:                                     "hostname must be a string",
		`{}`:                                                 "hostname is required",
		`{"hostname":"go.acme.com","extra":1}`:               "extra is not a known field",
	}
	for body, detail := range cases {
		resp := f.srv.Do(t, "POST", "/api/v1/domains", f.token, body)
		if detail == "" {
			testkit.JSON(t, resp, 201)
			continue
		}
		p := testkit.Problem(t, resp, 422, "validation-failed")
		if p["detail"] != detail {
			t.Errorf("%s: detail %q, want %q", body, p["detail"], detail)
		}
	}
	// The IDN form is stored as punycode.
	if d := f.add(t, f.token, "bücher.example"); d["hostname"] != "xn--bcher-kva.example" {
		t.Errorf("IDN stored as %v", d["hostname"])
	}
	d := f.add(t, f.token, "go.acme.com")
	for body, ptr := range map[string]string{
		`{"root_url":"ftp://acme.com"}`:      "/root_url",
		`{"not_found_url":"https://u@x.io"}`: "/not_found_url",
		`{"root_url":5}`:                     "/root_url",
		`{"hostname":"x.io"}`:                "/hostname",
	} {
		p := testkit.Problem(t, f.srv.Do(t, "PATCH", "/api/v1/domains/"+d["id"].(string), f.token, body), 422, "validation-failed")
		if errs, _ := p["errors"].([]any); len(errs) != 1 || errs[0].(map[string]any)["pointer"] != ptr {
			t.Errorf("%s: %v", body, p["errors"])
		}
	}
	if got := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/domains/"+d["id"].(string), f.token, ""), 200); got["root_url"] != nil || got["updated_at"] != d["updated_at"] {
		t.Errorf("a refused PATCH changed the domain: %v", got)
	}
}

func TestDomainsOfAnotherWorkspaceAreNotFound(t *testing.T) {
	t.Parallel()
	f := newDomainsFixture(t)
	id := f.add(t, f.otherTk, "go.other.example")["id"].(string)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/api/v1/domains/" + id, ""},
		{"PATCH", "/api/v1/domains/" + id, `{"root_url":null}`},
		{"DELETE", "/api/v1/domains/" + id, ""},
		{"POST", "/api/v1/domains/" + id + "/verify", ""},
		{"GET", "/api/v1/domains/dom_nope", ""},
		{"GET", "/api/v1/domains/lnk_06gzzspxy9ry5b4nj0v9yx7aq0", ""},
	} {
		testkit.Problem(t, f.srv.Do(t, c.method, c.path, f.token, c.body), 404, "not-found")
	}
	list := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/domains", f.token, ""), 200)
	if data, _ := list["data"].([]any); len(data) != 0 {
		t.Errorf("another workspace's domain listed: %v", list)
	}
	if got := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/domains/"+id, f.otherTk, ""), 200); got["root_url"] != nil {
		t.Errorf("changed through another workspace: %v", got)
	}
}

func TestDomainScopes(t *testing.T) {
	t.Parallel()
	f := newDomainsFixture(t)
	id := f.add(t, f.token, "go.acme.com")["id"].(string)
	// Every other scope, and each domains scope alone: neither implies the other.
	others := f.srv.APIKey(t, f.tenant.WorkspaceID, "links:read", "links:write", "analytics:read", "webhooks:read", "webhooks:write")
	readOnly := f.srv.APIKey(t, f.tenant.WorkspaceID, "domains:read")
	writeOnly := f.srv.APIKey(t, f.tenant.WorkspaceID, "domains:write")
	reads := []struct{ method, path, body string }{{"GET", "/api/v1/domains", ""}, {"GET", "/api/v1/domains/" + id, ""}}
	writes := []struct{ method, path, body string }{
		{"POST", "/api/v1/domains", `{"hostname":"x.acme.com"}`}, {"PATCH", "/api/v1/domains/" + id, `{"root_url":null}`},
		{"POST", "/api/v1/domains/" + id + "/verify", ""}, {"DELETE", "/api/v1/domains/" + id, ""},
	}
	check := func(token string, cs []struct{ method, path, body string }, scope string) {
		for _, c := range cs {
			p := testkit.Problem(t, f.srv.Do(t, c.method, c.path, token, c.body), 403, "insufficient-scope")
			if p["required_scope"] != scope {
				t.Errorf("%s %s: required_scope %v", c.method, c.path, p["required_scope"])
			}
		}
	}
	check(others, reads, "domains:read")
	check(others, writes, "domains:write")
	check(writeOnly, reads, "domains:read")
	check(readOnly, writes, "domains:write")
	testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/domains/"+id, readOnly, ""), 200)
}

func TestDomainCreateIsIdempotent(t *testing.T) {
	t.Parallel()
	f := newDomainsFixture(t)
	first := f.srv.Do(t, "POST", "/api/v1/domains", f.token, `{"hostname":"go.acme.com"}`, "Idempotency-Key", "dom-1")
	a := testkit.JSON(t, first, 201)
	again := f.srv.Do(t, "POST", "/api/v1/domains", f.token, `{"hostname":"go.acme.com"}`, "Idempotency-Key", "dom-1")
	if again.Header.Get("Idempotent-Replayed") != "true" {
		t.Error("no Idempotent-Replayed on the replay")
	}
	if b := testkit.JSON(t, again, 201); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("replay %v, first %v", b, a)
	}
	list := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/domains", f.token, ""), 200)
	if data, _ := list["data"].([]any); len(data) != 1 {
		t.Errorf("%d domains after a replay", len(data))
	}
}

func TestDomainDeleteRefusedWhileLinksUseIt(t *testing.T) {
	t.Parallel()
	f := newDomainsFixture(t)
	d := f.srv.VerifiedDomain(t, f.dns, f.token, "go.acme.com")
	l := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links", f.token, `{"target_url":"https://example.com/","domain":"go.acme.com"}`), 201)
	p := testkit.Problem(t, f.srv.Do(t, "DELETE", "/api/v1/domains/"+d["id"].(string), f.token, ""), 409, "conflict")
	if p["detail"] != "1 link uses this domain; delete it or move it first" {
		t.Errorf("detail %v", p["detail"])
	}
	testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/domains/"+d["id"].(string), f.token, ""), 200)
	if resp := f.srv.Do(t, "DELETE", "/api/v1/links/"+l["id"].(string), f.token, ""); resp.StatusCode != 204 {
		t.Fatalf("delete link: %d", resp.StatusCode)
	}
	if resp := f.srv.Do(t, "DELETE", "/api/v1/domains/"+d["id"].(string), f.token, ""); resp.StatusCode != 204 {
		t.Fatalf("delete domain once its link is deleted: %d", resp.StatusCode)
	}
}

// TestDomainChecks: the domain object says what to point where (a CNAME
// for a subdomain, an ALIAS for an apex, from LINKQR_CUSTOM_DOMAIN_TARGET)
// and carries the live checks, in GET, the list and after verify: the
// in-test DNS server answers for a domain pointing at linkqr, one with no
// record yet and one pointing elsewhere. Checks are kept (a change in DNS
// shows after verify, which looks afresh); another workspace's domain is
// not found.
func TestDomainChecks(t *testing.T) {
	t.Parallel()
	dnsSrv := testkit.StartDNS(t)
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_DNS_RESOLVER", dnsSrv.Addr), testkit.WithEnv("LINKQR_CUSTOM_DOMAIN_TARGET", "links.linkqr.test"))
	tenant, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	token, otherTk := srv.APIKey(t, tenant.WorkspaceID), srv.APIKey(t, other.WorkspaceID)
	dnsSrv.SetA("links.linkqr.test", netip.MustParseAddr("192.0.2.10"))
	dnsSrv.SetCNAME("go.acme-shop.com", "links.linkqr.test")
	dnsSrv.SetA("wrong.acme-shop.com", netip.MustParseAddr("203.0.113.9"))

	check := func(d map[string]any, key string) (state, detail string) {
		t.Helper()
		c, _ := d["checks"].(map[string]any)[key].(map[string]any)
		state, _ = c["state"].(string)
		detail, _ = c["detail"].(string)
		if at, _ := c["checked_at"].(string); at == "" {
			t.Errorf("%s: %s without checked_at: %v", d["hostname"], key, c)
		}
		return state, detail
	}
	routing := func(d map[string]any) string {
		r, _ := d["routing"].(map[string]any)
		recs, _ := r["records"].([]any)
		out := fmt.Sprint(r["apex"])
		for _, rec := range recs {
			m := rec.(map[string]any)
			out += fmt.Sprintf(" %s %s %s", m["type"], m["name"], m["value"])
		}
		return out
	}

	ok := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/domains", token, `{"hostname":"go.acme-shop.com"}`), 201)
	if got := routing(ok); got != "false CNAME go.acme-shop.com links.linkqr.test" {
		t.Errorf("routing of a subdomain: %s", got)
	}
	if s, d := check(ok, "routing"); s != "ok" || d != "go.acme-shop.com is a CNAME to links.linkqr.test." {
		t.Errorf("routing check: %s %q", s, d)
	}
	if s, d := check(ok, "verification"); s != "pending" || !strings.HasPrefix(d, "No TXT record at _linkqr.go.acme-shop.com yet") {
		t.Errorf("verification check: %s %q", s, d)
	}
	if s, d := check(ok, "certificate"); s != "not_applicable" || !strings.HasPrefix(d, "Not applicable: TLS is terminated by the proxy") {
		t.Errorf("certificate check without LINKQR_TLS_ADDR: %s %q", s, d)
	}

	apex := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/domains", token, `{"hostname":"acme-shop.com"}`), 201)
	if got := routing(apex); got != "true ALIAS acme-shop.com links.linkqr.test" {
		t.Errorf("routing of an apex: %s", got)
	}
	if s, d := check(apex, "routing"); s != "pending" || d != "acme-shop.com has no CNAME, A or AAAA record yet." {
		t.Errorf("apex without a record: %s %q", s, d)
	}
	wrong := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/domains", token, `{"hostname":"wrong.acme-shop.com"}`), 201)
	if s, d := check(wrong, "routing"); s != "failed" || d != "wrong.acme-shop.com points at 203.0.113.9, not at linkqr: point wrong.acme-shop.com at links.linkqr.test (192.0.2.10)." {
		t.Errorf("pointing elsewhere: %s %q", s, d)
	}

	list := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/domains", token, ""), 200)
	states := map[string]string{}
	for _, item := range list["data"].([]any) {
		d := item.(map[string]any)
		states[d["hostname"].(string)], _ = check(d, "routing")
	}
	if fmt.Sprint(states) != "map[acme-shop.com:pending go.acme-shop.com:ok wrong.acme-shop.com:failed]" {
		t.Errorf("list: %v", states)
	}

	// The apex is flattened now: GET answers from what was kept, verify
	// (a failed one too) looks afresh.
	apexID := apex["id"].(string)
	dnsSrv.SetA("acme-shop.com", netip.MustParseAddr("192.0.2.10"))
	if s, _ := check(testkit.JSON(t, srv.Do(t, "GET", "/api/v1/domains/"+apexID, token, ""), 200), "routing"); s != "pending" {
		t.Errorf("GET within a minute looked again: %s", s)
	}
	testkit.Problem(t, srv.Do(t, "POST", "/api/v1/domains/"+apexID+"/verify", token, ""), 422, "domain-not-verified")
	got := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/domains/"+apexID, token, ""), 200)
	if s, d := check(got, "routing"); s != "ok" || d != "acme-shop.com points at 192.0.2.10, linkqr's address." {
		t.Errorf("after verify: %s %q", s, d)
	}
	dnsSrv.SetTXT("_linkqr.acme-shop.com", got["verification"].(map[string]any)["value"].(string))
	verified := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/domains/"+apexID+"/verify", token, ""), 200)
	if s, d := check(verified, "verification"); verified["status"] != "verified" || s != "ok" || d != "The TXT record at _linkqr.acme-shop.com holds this domain's token." {
		t.Errorf("verified: %s %q", s, d)
	}

	for _, c := range []struct{ method, path string }{{"GET", "/api/v1/domains/" + apexID}, {"POST", "/api/v1/domains/" + apexID + "/verify"}} {
		testkit.Problem(t, srv.Do(t, c.method, c.path, otherTk, ""), 404, "not-found")
	}
	if data := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/domains", otherTk, ""), 200)["data"].([]any); len(data) != 0 {
		t.Errorf("another workspace lists %v", data)
	}
}
