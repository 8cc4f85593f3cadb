package web_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/testkit"
)

// TestBrowserDomainChecks walks the domain pages of a workspace whose
// domains point at links.linkqr.test: the list says what to point domains
// at; a subdomain pointing elsewhere shows its CNAME to create and a
// failed check naming where it points now; once DNS is fixed, "Verify
// now" shows every check passing, and "Check again" soon after says the
// checks stand; an apex shows the ALIAS and linkqr's addresses instead;
// the list shows each domain's checks. Each page is looked at (and
// screenshot) at 390 and 1280 px and passes axe at both.
func TestBrowserDomainChecks(t *testing.T) {
	t.Parallel()
	ctx := chromiumUser(t)
	dnsSrv := testkit.StartDNS(t)
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_DNS_RESOLVER", dnsSrv.Addr), testkit.WithEnv("LINKQR_CUSTOM_DOMAIN_SCHEME", "http"),
		testkit.WithEnv("LINKQR_CUSTOM_DOMAIN_TARGET", "links.linkqr.test"))
	dnsSrv.SetA("links.linkqr.test", netip.MustParseAddr("192.0.2.10"))
	dnsSrv.SetAAAA("links.linkqr.test", netip.MustParseAddr("2001:db8::10"))
	p := &pilot{t: t, ctx: ctx, srv: srv, js: true}
	admin := testkit.NewTenant(t, srv.Pool)
	ws := "/w/" + admin.WorkspaceExternalID()
	value := func(testID string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Value(css(testID)))
		if err != nil {
			t.Fatalf("value of %s: %v", testID, err)
		}
		return v
	}
	axe := func() {
		t.Helper()
		page, _ := chromedp.Run(ctx, chromedp.Location())
		for _, width := range []int64{1280, 390} {
			p.run(chromedp.EmulateViewport(width, 900))
			testkit.AxeCheck(ctx, t, page)
		}
	}
	p.run(chromedp.Navigate(srv.URL+"/login"), chromedp.SendKeys(css("signin-email"), admin.Email), chromedp.SendKeys(css("signin-password"), admin.Password))
	p.submit(css("signin-submit"), "nav-email")

	p.run(chromedp.Navigate(srv.URL+ws+"/settings/domains"), chromedp.WaitVisible(css("domains-target")))
	if got := value("domains-target-name"); got != "links.linkqr.test" {
		t.Errorf("the list's CNAME target: %q", got)
	}
	p.look("domains-target")

	dnsSrv.SetA("go.acme-shop.com", netip.MustParseAddr("203.0.113.9"))
	p.run(chromedp.SendKeys(css("domain-hostname-input"), "go.acme-shop.com"))
	p.submit(css("domain-add-submit"), "domain-checks")
	if got := p.text("check-routing-state"); got != "Failed" {
		t.Errorf("routing state %q", got)
	}
	if got := p.text("check-routing-detail"); got != "go.acme-shop.com points at 203.0.113.9, not at linkqr: point go.acme-shop.com at links.linkqr.test (192.0.2.10, 2001:db8::10)." {
		t.Errorf("routing detail %q", got)
	}
	if got := p.text("check-certificate-state"); got != "Not applicable" {
		t.Errorf("certificate state %q", got)
	}
	if typ, name, val := p.text("route-type"), value("route-0-name"), value("route-0-value"); typ != "CNAME" || name != "go.acme-shop.com" || val != "links.linkqr.test" {
		t.Errorf("the record to create: %s %s %s", typ, name, val)
	}
	p.look("domain-checks-failed")
	axe()

	txtName, txtValue := value("domain-record-name"), value("domain-record-value")
	dnsSrv.SetA("go.acme-shop.com", netip.Addr{})
	dnsSrv.SetCNAME("go.acme-shop.com", "links.linkqr.test")
	dnsSrv.SetTXT(txtName, txtValue)
	p.submit(css("domain-verify"), "flash-ok")
	for id, want := range map[string]string{"check-verification-state": "OK", "check-routing-state": "OK", "domain-status": "Verified"} {
		if got := p.text(id); got != want {
			t.Errorf("after fixing DNS and verifying, %s: %q", id, got)
		}
	}
	if got := p.text("check-routing-detail"); got != "go.acme-shop.com is a CNAME to links.linkqr.test." {
		t.Errorf("routing detail %q", got)
	}
	p.look("domain-checks-ok")
	p.submit(css("domain-check-again"), "flash-ok")
	if got := p.text("flash-ok"); !strings.HasPrefix(got, "The checks below are from ") {
		t.Errorf("Check again right after verifying: %q", got)
	}

	p.run(chromedp.Navigate(srv.URL+ws+"/settings/domains"), chromedp.WaitVisible(css("domain-add-form")))
	p.run(chromedp.SendKeys(css("domain-hostname-input"), "acme-shop.com"))
	p.submit(css("domain-add-submit"), "domain-apex")
	if typ, val := p.text("route-type"), value("route-0-value"); typ != "ALIAS" || val != "links.linkqr.test" {
		t.Errorf("an apex's record: %s %s", typ, val)
	}
	if a, aaaa := value("route-addr-0-value"), value("route-addr-1-value"); a != "192.0.2.10" || aaaa != "2001:db8::10" {
		t.Errorf("an apex's address records: %s %s", a, aaaa)
	}
	if got := p.text("check-routing-detail"); got != "acme-shop.com has no CNAME, A or AAAA record yet." {
		t.Errorf("apex routing detail %q", got)
	}
	p.look("domain-apex")
	axe()

	p.run(chromedp.Navigate(srv.URL+ws+"/settings/domains"), chromedp.WaitVisible(css("domains-table")))
	if got := p.eval(`[...document.querySelectorAll('[data-testid="row-routing"]')].map(e => e.textContent.trim()).join(",")`); got != "Waiting,OK" {
		t.Errorf("the list's routing checks (newest first): %q", got)
	}
	p.look("domains-checks")
	axe()
}
