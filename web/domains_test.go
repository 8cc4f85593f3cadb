package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/testkit"
)

// domainsServer is a server whose domain verification asks its own DNS
// server, with short URLs on custom domains in http (as in development).
func domainsServer(t *testing.T) (*testkit.Server, *testkit.DNSServer) {
	t.Helper()
	dnsSrv := testkit.StartDNS(t)
	return testkit.StartServer(t, testkit.WithEnv("LINKQR_DNS_RESOLVER", dnsSrv.Addr), testkit.WithEnv("LINKQR_CUSTOM_DOMAIN_SCHEME", "http")), dnsSrv
}

// TestDomainsPages: an admin adds a domain (a bad hostname first: the
// message at the field, nothing added), sees its record, verifies it (the
// resolver's answer on failure), saves its URLs (a bad one refused) and
// cannot remove it while a link uses it; a member sees the list and the
// domain read-only and cannot post; another workspace's id is 404.
func TestDomainsPages(t *testing.T) {
	t.Parallel()
	srv, dnsSrv := domainsServer(t)
	admin := testkit.NewTenant(t, srv.Pool)
	member := testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, admin, member, account.RoleMember)
	ws := "/w/" + admin.WorkspaceExternalID()
	b := newBrowser(t, srv)
	b.mustSignIn(admin.Email, admin.Password)

	p := b.post(ws+"/settings/domains", url.Values{"hostname": {"10.0.0.1"}})
	if p.status != http.StatusUnprocessableEntity || textOf(t, p.body, "domain-hostname-input-error") != "The hostname must be a hostname, not an IP address." {
		t.Fatalf("bad hostname: %d %s", p.status, excerpt(p.body))
	}
	if !hasTestID(p.body, "domains-empty") {
		t.Error("a refused hostname was added")
	}
	p = b.post(ws+"/settings/domains", url.Values{"hostname": {"Go.Acme.com"}})
	show := b.follow(p)
	if show.status != http.StatusOK || textOf(t, show.body, "domain-hostname") != "go.acme.com" || textOf(t, show.body, "domain-status") != "Pending" {
		t.Fatalf("after adding: %d %s", show.status, excerpt(show.body))
	}
	domPath := p.location
	ds, _, err := srv.App.Domains.List(context.Background(), admin.WorkspaceID, nil, 10)
	if err != nil || len(ds) != 1 {
		t.Fatal(ds, err)
	}
	d := ds[0]
	if !strings.Contains(show.body, `value="_linkqr.go.acme.com"`) || !strings.Contains(show.body, `value="`+d.RecordValue()+`"`) {
		t.Errorf("the record is not shown: %s", excerpt(show.body))
	}
	// What to point where (the default target: LINKQR_BASE_URL's host, an
	// address here) and the live checks.
	if textOf(t, show.body, "route-type") != "A" || !strings.Contains(show.body, `id="route-0-value" value="127.0.0.1"`) {
		t.Errorf("the record pointing at linkqr: %s", excerpt(show.body))
	}
	for id, want := range map[string]string{
		"check-verification-state": "Waiting", "check-routing-state": "Waiting", "check-certificate-state": "Not applicable",
		"check-routing-detail": "go.acme.com has no CNAME, A or AAAA record yet.",
	} {
		if got := textOf(t, show.body, id); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	if got := textOf(t, b.follow(b.post(domPath+"/check", nil)).body, "flash-ok"); !strings.HasPrefix(got, "The checks below are from ") {
		t.Errorf("Check again right after a look: %q", got)
	}
	if p := b.post(ws+"/settings/domains", url.Values{"hostname": {"go.acme.com"}}); p.status != http.StatusConflict ||
		textOf(t, p.body, "domain-hostname-input-error") != "This workspace already has this hostname." {
		t.Errorf("the same hostname again: %d %s", p.status, excerpt(p.body))
	}

	dnsSrv.SetTXT("_linkqr.go.acme.com", "linkqr-verification=nope")
	v := b.follow(b.post(domPath+"/verify", nil))
	if got := textOf(t, v.body, "flash-error"); got != `Not verified: found "linkqr-verification=nope" at _linkqr.go.acme.com, expected "`+d.RecordValue()+`".` {
		t.Errorf("verify with a wrong record: %q", got)
	}
	dnsSrv.SetTXT("_linkqr.go.acme.com", d.RecordValue())
	v = b.follow(b.post(domPath+"/verify", nil))
	if textOf(t, v.body, "flash-ok") != "go.acme.com is verified." || textOf(t, v.body, "domain-status") != "Verified" {
		t.Errorf("verify: %s", excerpt(v.body))
	}

	p = b.post(domPath, url.Values{"root_url": {"ftp://acme.com"}, "not_found_url": {"https://acme.com/404"}})
	if p.status != http.StatusUnprocessableEntity || textOf(t, p.body, "domain-root-url-input-error") != "The root URL must be an absolute http or https URL." {
		t.Errorf("bad root URL: %d %s", p.status, excerpt(p.body))
	}
	b.follow(b.post(domPath, url.Values{"root_url": {"https://acme.com"}, "not_found_url": {""}}))
	if got, _ := srv.App.Domains.Get(context.Background(), admin.WorkspaceID, d.ID); got.RootURL == nil || *got.RootURL != "https://acme.com" || got.NotFoundURL != nil {
		t.Errorf("saved URLs: %+v", got)
	}

	target, _ := link.ParseTargetURL("https://example.com/")
	if _, err := srv.App.Links.Create(context.Background(), admin.WorkspaceID, link.CreateInput{TargetURL: target, Domain: &d.Hostname}); err != nil {
		t.Fatal(err)
	}
	confirm := b.post(domPath+"/delete", nil)
	if confirm.status != http.StatusOK || !strings.Contains(confirm.body, "Remove go.acme.com from") {
		t.Fatalf("remove without confirmation: %d %s", confirm.status, excerpt(confirm.body))
	}
	refused := b.follow(b.post(domPath+"/delete", url.Values{"confirmed": {"yes"}}))
	if got := textOf(t, refused.body, "flash-error"); got != "go.acme.com was not removed: 1 link uses this domain; delete it or move it first." {
		t.Errorf("remove while in use: %q", got)
	}

	m := newBrowser(t, srv)
	m.mustSignIn(member.Email, member.Password)
	list := m.get(ws + "/settings/domains")
	if list.status != http.StatusOK || !hasTestID(list.body, "domain-row") || hasTestID(list.body, "domain-add-form") || !hasTestID(list.body, "domains-admins-only") {
		t.Errorf("member's list: %d %s", list.status, excerpt(list.body))
	}
	page := m.get(domPath)
	if page.status != http.StatusOK || hasTestID(page.body, "domain-verify") || hasTestID(page.body, "domain-urls-form") || hasTestID(page.body, "domain-remove") ||
		!strings.Contains(page.body, "https://acme.com") {
		t.Errorf("member's domain page: %d %s", page.status, excerpt(page.body))
	}
	for _, path := range []string{ws + "/settings/domains", domPath, domPath + "/verify", domPath + "/delete"} {
		if p := m.post(path, url.Values{"hostname": {"x.acme.com"}, "confirmed": {"yes"}}); p.status != http.StatusForbidden {
			t.Errorf("member posts %s: %d", path, p.status)
		}
	}
	if p := m.post(domPath+"/check", nil); p.status != http.StatusSeeOther || p.location != domPath {
		t.Errorf("a member's Check again: %d %s", p.status, p.location)
	}

	other := testkit.NewTenant(t, srv.Pool)
	o := newBrowser(t, srv)
	o.mustSignIn(other.Email, other.Password)
	otherPath := "/w/" + other.WorkspaceExternalID() + "/settings/domains/" + strings.TrimPrefix(domPath, ws+"/settings/domains/")
	if p := o.get(otherPath); p.status != http.StatusNotFound {
		t.Errorf("another workspace's domain under one's own workspace: %d", p.status)
	}
	if p := o.post(otherPath+"/delete", url.Values{"confirmed": {"yes"}}); p.status != http.StatusNotFound {
		t.Errorf("remove another workspace's domain: %d", p.status)
	}
	if p := o.post(otherPath+"/check", nil); p.status != http.StatusNotFound {
		t.Errorf("check another workspace's domain: %d", p.status)
	}
	if p := b.get(ws + "/settings/domains/dom_nope"); p.status != http.StatusNotFound {
		t.Errorf("malformed id: %d", p.status)
	}
}

func TestBrowserDomainWalk(t *testing.T) {
	t.Parallel()
	walkDomain(t, true)
}

func TestBrowserDomainWalkWithoutJavaScript(t *testing.T) {
	t.Parallel()
	walkDomain(t, false)
}

// walkDomain adds a domain in Settings → Domains, copies the record, tries
// "Verify now" before and after the record exists (published on the test's
// DNS server), saves a root URL, creates a link on the domain and finds it
// with the domain filter (walkLinkOnDomain), is refused removing the domain
// while the link uses it, deletes the link and removes the domain (through
// the dialog, or the confirmation page without JavaScript), looking at
// each page at 1280 and 390 px.
func walkDomain(t *testing.T, js bool) {
	ctx := chromiumUser(t)
	srv, dnsSrv := domainsServer(t)
	p := &pilot{t: t, ctx: ctx, srv: srv, js: js}
	if !js {
		if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatal(err)
		}
	}
	dlg := answerDialogs(ctx)
	dlg.accept.Store(true)
	admin := testkit.NewTenant(t, srv.Pool)
	ws := "/w/" + admin.WorkspaceExternalID()
	p.run(chromedp.Navigate(srv.URL+"/login"), chromedp.SendKeys(css("signin-email"), admin.Email), chromedp.SendKeys(css("signin-password"), admin.Password))
	p.submit(css("signin-submit"), "nav-email")
	p.run(chromedp.Navigate(srv.URL+ws+"/settings/domains"), chromedp.WaitVisible(css("domains-empty")))
	p.look("domains-empty")

	p.run(chromedp.SendKeys(css("domain-hostname-input"), "bücher.example"))
	p.submit(css("domain-add-submit"), "domain-record")
	if got := p.text("domain-hostname"); got != "xn--bcher-kva.example" {
		t.Errorf("hostname shown as %q", got)
	}
	value, _ := chromedp.Run(ctx, chromedp.Value(css("domain-record-value")))
	name, _ := chromedp.Run(ctx, chromedp.Value(css("domain-record-name")))
	if name != "_linkqr.xn--bcher-kva.example" || !strings.HasPrefix(value, domain.ValuePrefix) {
		t.Fatalf("record %q = %q", name, value)
	}
	p.look("domain-pending")

	p.submit(css("domain-verify"), "flash-error")
	if got := p.text("flash-error"); !strings.HasPrefix(got, "Not verified: no TXT record at _linkqr.xn--bcher-kva.example") {
		t.Errorf("verify without a record: %q", got)
	}
	if got := p.text("check-verification-detail"); !strings.HasPrefix(got, "No TXT record at _linkqr.xn--bcher-kva.example yet") {
		t.Errorf("the TXT check: %q", got)
	}
	p.look("domain-not-verified")
	// While the domain is pending, the New link form only says where to verify it.
	domPage, _ := chromedp.Run(ctx, chromedp.Location())
	p.run(chromedp.Navigate(srv.URL+ws+"/links"), chromedp.WaitVisible(css("new-domain-pending")))
	if n := p.eval(`String(document.querySelectorAll('[data-testid="new-domain"], [data-testid="domain-filter"]').length)`); n != "0" {
		t.Errorf("%s domain choices while the domain is pending", n)
	}
	p.look("links-domain-pending")
	p.run(chromedp.Navigate(domPage), chromedp.WaitVisible(css("domain-verify")))
	dnsSrv.SetTXT(name, value)
	p.submit(css("domain-verify"), "flash-ok")
	if got := p.text("domain-status"); got != "Verified" {
		t.Errorf("status after verifying: %q", got)
	}
	p.run(chromedp.SendKeys(css("domain-root-url-input"), "https://bücher.example/"))
	p.submit(css("domain-urls-save"), "flash-ok")
	if v, _ := chromedp.Run(ctx, chromedp.Value(css("domain-root-url-input"))); v != "https://bücher.example/" {
		t.Errorf("root URL after saving: %q", v)
	}
	p.look("domain-verified")

	p.run(chromedp.Navigate(srv.URL+ws+"/settings/domains"), chromedp.WaitVisible(css("domain-row")))
	p.look("domains")

	linkPage := walkLinkOnDomain(p, ws, "xn--bcher-kva.example")

	// Removing is refused while the link uses the domain; once the link
	// is deleted, the domain goes.
	removeDomain := func(want string) {
		t.Helper()
		p.run(chromedp.Navigate(srv.URL+ws+"/settings/domains"), chromedp.WaitVisible(css("domain-link")))
		p.run(chromedp.Click(css("domain-link")), chromedp.WaitVisible(css("domain-remove")))
		if js {
			p.submit(css("domain-remove"), want)
		} else {
			p.submit(css("domain-remove"), "confirm-submit")
			p.look("domain-remove-confirm")
			p.submit(css("confirm-submit"), want)
		}
	}
	removeDomain("flash-error")
	if got := p.text("flash-error"); got != "xn--bcher-kva.example was not removed: 1 link uses this domain; delete it or move it first." {
		t.Errorf("removing while a link uses it: %q", got)
	}
	p.run(chromedp.Navigate(linkPage), chromedp.WaitVisible(css("delete-link")))
	p.submit(css("delete-link"), "confirm-delete")
	p.submit(css("confirm-delete"), "flash-ok")
	removeDomain("domains-empty")
	if js && dlg.seen.Load() != 2 {
		t.Errorf("%d dialogs before removing twice", dlg.seen.Load())
	}
	if got := p.text("flash-ok"); got != "xn--bcher-kva.example was removed." {
		t.Errorf("after removing: %q", got)
	}
}

// walkLinkOnDomain creates a link on the default domain and one on host
// from the New link form, checks the second one's page (its domain, its
// short URL and the QR code's content) and finds it in the links list with
// the domain filter. It returns the link page's address.
func walkLinkOnDomain(p *pilot, ws, host string) string {
	t := p.t
	t.Helper()
	p.run(chromedp.Navigate(p.srv.URL+ws+"/links"), chromedp.WaitVisible(css("new-domain")))
	if v, _ := chromedp.Run(p.ctx, chromedp.Value(css("new-domain"))); v != "" {
		t.Errorf("the form chooses %q at first, want the default domain", v)
	}
	p.run(chromedp.SendKeys(css("new-target"), "https://example.com/default"), chromedp.SendKeys(css("new-title"), "On the default domain"))
	p.submit(css("new-link-submit"), "flash-link")

	p.run(chromedp.Navigate(p.srv.URL+ws+"/links"), chromedp.WaitVisible(css("new-domain")))
	p.run(chromedp.SendKeys(css("new-target"), "https://example.com/menu"), chromedp.SendKeys(css("new-title"), "Menu on our domain"),
		chromedp.SetValue(css("new-domain"), host))
	p.run(chromedp.Click(css("new-more")), chromedp.WaitVisible(css("new-code")), chromedp.SendKeys(css("new-code"), "docs"))
	p.look("links-domain-form")
	p.submit(css("new-link-submit"), "flash-link")
	short := "http://" + host + "/docs"
	if got := p.text("flash-ok"); got != "Link created: Menu on our domain — "+short+" now redirects to https://example.com/menu." {
		t.Errorf("flash after creating on the domain: %q", got)
	}
	p.submit(css("flash-link"), "link-page")
	if got := p.text("link-domain"); got != host {
		t.Errorf("the link page shows the domain %q", got)
	}
	if got := p.text2("#link-short-url"); got != short {
		t.Errorf("the link page shows the short URL %q", got)
	}
	p.look("link-on-domain")
	page, _ := chromedp.Run(p.ctx, chromedp.Location())
	img, _ := p.download(p.eval(`document.querySelector('[data-testid="qr-download-png"]').href`))
	if got := testkit.DecodeQR(t, img); got != short+"?qr=1" {
		t.Errorf("the QR code encodes %q, want %q?qr=1", got, short)
	}

	p.run(chromedp.Navigate(p.srv.URL+ws+"/links"), chromedp.WaitVisible(css("domain-filter")))
	if n := p.eval(`String(document.querySelectorAll('[data-testid="link-row"]').length)`); n != "2" {
		t.Errorf("%s links before filtering", n)
	}
	p.run(chromedp.SetValue(css("domain-filter"), host))
	p.submit(css("search-submit"), "link-row")
	if n := p.eval(`String(document.querySelectorAll('[data-testid="link-row"]').length)`); n != "1" {
		t.Errorf("%s links on %s", n, host)
	}
	if got := p.text("short-url"); got != short {
		t.Errorf("the filtered list shows %q", got)
	}
	if got := p.text("links-total"); !strings.HasPrefix(got, "1 link matches") {
		t.Errorf("count when filtered: %q", got)
	}
	p.look("links-domain-filter")
	return page
}
