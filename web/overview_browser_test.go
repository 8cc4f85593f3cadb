package web_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/testkit"
)

// TestBrowserCountriesSourcesAndOverview opens, in Chromium at 1280 and 390
// px, a link page with scans from 14 countries and both sources, and the
// workspace overview reached from the top bar: the countries (ten, then
// the rest behind "All 14 countries", which opens without JavaScript), the
// QR code / link split, the top links; nothing is wider than a phone.
func TestBrowserCountriesSourcesAndOverview(t *testing.T) {
	t.Parallel()
	ctx := chromiumUser(t)
	srv := testkit.StartServer(t)
	p := &pilot{t: t, ctx: ctx, srv: srv, js: true}
	tn := testkit.NewTenant(t, srv.Pool)
	b := newBrowser(t, srv)
	b.mustSignIn(tn.Email, tn.Password)
	ws := tn.WorkspaceExternalID()
	menu := createInForm(t, b, ws, url.Values{"target_url": {"https://example.com/menu"}, "title": {"Spring menu at the harbour café, with a rather long title"}})
	poster := createInForm(t, b, ws, url.Values{"target_url": {"https://example.com/poster"}, "code": {"poster-1"}})
	now := time.Now().UTC()
	id := linkIDOf(t, menu)
	addScans(t, srv, tn.WorkspaceID, id, now.Add(-time.Hour), 20, "DE", "qr")
	addScans(t, srv, tn.WorkspaceID, id, now.Add(-26*time.Hour), 5, "", "link")
	for i, c := range []string{"FR", "IT", "ES", "PT", "NL", "BE", "AT", "CH", "PL", "SE", "NO", "DK"} {
		addScans(t, srv, tn.WorkspaceID, id, now.Add(-time.Duration(i*30)*time.Hour), 1+i%3, c, "link")
	}
	addScans(t, srv, tn.WorkspaceID, linkIDOf(t, poster), now.Add(-50*time.Hour), 9, "GB", "qr")
	foldScans(t, srv, tn.WorkspaceID, 20+5+24+9)

	// Sign in in Chromium.
	p.run(chromedp.Navigate(srv.URL+"/login"), chromedp.SendKeys(css("signin-email"), tn.Email), chromedp.SendKeys(css("signin-password"), tn.Password))
	p.submit(css("signin-submit"), "new-link-form")

	p.run(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+menu+"?range=30d"), chromedp.WaitVisible(css("countries")))
	if n := p.eval(`String(document.querySelectorAll('[data-testid="countries"] > ul > [data-testid="country-row"]').length)`); n != "10" {
		t.Errorf("%s country rows shown at first, want 10", n)
	}
	first := p.eval(`document.querySelector('[data-testid="country-row"]').innerText`)
	if !strings.Contains(first, "🇩🇪") || !strings.Contains(first, "Germany") || !strings.Contains(first, "DE") || !strings.Contains(first, "20") {
		t.Errorf("first country row %q", first)
	}
	if vis := p.eval(`String(document.querySelector('[data-testid="countries-more"] [data-testid="country-row"]').checkVisibility())`); vis != "false" {
		t.Error("the countries beyond ten show before All 14 countries is opened")
	}
	if got := p.text("source-qr"); !strings.Contains(got, "QR code scans") || !strings.Contains(got, "20") {
		t.Errorf("QR code scans: %q", got)
	}
	if got := p.text("source-link"); !strings.Contains(got, "Link clicks") || !strings.Contains(got, "29") {
		t.Errorf("link clicks: %q", got)
	}
	p.run(chromedp.ScrollIntoView(css("countries")))
	p.look("link-countries")
	p.run(chromedp.Click(chromedp.CSS(`[data-testid="countries-more"] summary`)))
	if vis := p.eval(`String(document.querySelector('[data-testid="countries-more"] [data-testid="country-row"]').checkVisibility())`); vis != "true" {
		t.Error("All 14 countries does not open")
	}
	p.look("link-countries-all")

	// The overview, from the top bar.
	p.run(chromedp.EmulateViewport(1280, 900))
	p.submit(css("nav-overview"), "overview")
	if got := p.text("overview-total"); got != "58" {
		t.Errorf("overview total %q, want 58", got)
	}
	names := p.eval(`[...document.querySelectorAll('[data-testid="top-link-name"]')].map(e => e.innerText).join("|")`)
	if names != "Spring menu at the harbour café, with a rather long title|poster-1" {
		t.Errorf("top links %q", names)
	}
	p.look("overview")
	// Choosing 7 days applies at once.
	p.run(chromedp.SetAttributeValue(chromedp.CSS("body"), "data-left", "1"), chromedp.SetValue(css("range-select"), "7d"))
	p.run(chromedp.WaitVisible(chromedp.CSS(`body:not([data-left]) [data-testid="overview"]`)))
	if n := p.eval(`String(document.querySelectorAll('[data-testid="chart-bar"]').length)`); n != "7" {
		t.Errorf("7 days: %s bars", n)
	}
	p.look("overview-7d")
	// Choosing a time zone applies at once too, keeping the range.
	p.run(chromedp.SetAttributeValue(chromedp.CSS("body"), "data-left", "1"), chromedp.SetValue(css("timezone-select"), "Asia/Kolkata"))
	p.run(chromedp.WaitVisible(chromedp.CSS(`body:not([data-left]) [data-testid="overview"]`)))
	if u := p.eval(`location.search`); !strings.Contains(u, "timezone=Asia%2FKolkata") || !strings.Contains(u, "range=7d") {
		t.Errorf("after choosing Kolkata: %s", u)
	}
	if got := p.text("overview-total"); got == "0" || !strings.Contains(p.text("overview-period"), "days in Asia/Kolkata") {
		t.Errorf("7 days in Kolkata: total %q, period %q", got, p.text("overview-period"))
	}
	p.look("overview-kolkata")
	// An unknown zone, typed into the address: said at the picker.
	p.run(chromedp.Navigate(srv.URL+"/w/"+ws+"/overview?range=7d&timezone=Mars/Olympus"), chromedp.WaitVisible(css("range-error-timezone")))
	p.look("overview-bad-zone")
	// Without JavaScript the picker is a plain form: choose, then Show.
	if _, err := chromedp.Call(p.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	p.js = false
	p.run(chromedp.Navigate(srv.URL+"/w/"+ws+"/overview"), chromedp.WaitVisible(css("range-submit")), chromedp.SetValue(css("timezone-select"), "Asia/Kathmandu"))
	p.submit(css("range-submit"), "overview")
	if u := p.eval(`location.search`); !strings.Contains(u, "timezone=Asia%2FKathmandu") || !strings.Contains(p.text("overview-period"), "days in Asia/Kathmandu") {
		t.Errorf("the picker without JavaScript: %s", u)
	}
	p.look("overview-kathmandu")
	if _, err := chromedp.Call(p.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
		t.Fatal(err)
	}
	p.js = true
	// A workspace without scans, where the viewer is a member (not an
	// admin): Overview in the top bar, empty, and saying so.
	empty := testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, empty, tn, account.RoleMember)
	p.run(chromedp.Navigate(srv.URL+"/w/"+empty.WorkspaceExternalID()+"/overview"), chromedp.WaitVisible(css("overview-empty")))
	if p.eval(`String(!!document.querySelector('[data-testid="nav-overview"].active'))`) != "true" {
		t.Error("Overview is not the current entry of a member's top bar")
	}
	p.look("overview-empty")
}
