package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
	"github.com/linkqr/linkqr/internal/webhook"
)

// desktopUA is a person's browser: headless Chromium's own user agent
// ("HeadlessChrome") is classified as a bot, whose scans are not counted.
const desktopUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

// chromiumUser starts a headless Chromium that presents itself as a
// person's desktop browser.
func chromiumUser(t *testing.T) context.Context {
	t.Helper()
	return testkit.Chromium(t, chromedp.UserAgent(desktopUA))
}

// pilot drives one Chromium through linkqr's pages.
type pilot struct {
	t   *testing.T
	ctx context.Context
	srv *testkit.Server
	js  bool
}

func (p *pilot) run(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, steps...); err != nil {
		p.t.Fatal(err)
	}
}

func (p *pilot) text(testID string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Text(css(testID)))
	if err != nil {
		p.t.Fatalf("text of %s: %v", testID, err)
	}
	return strings.TrimSpace(s)
}

func (p *pilot) eval(js string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", js, err)
	}
	return s
}

// submit clicks something that loads a new page and waits for testID on
// the new page (the page being left is marked, so its elements don't
// count). Without JavaScript in the page, the mark is set through the
// protocol, which works either way.
func (p *pilot) submit(button chromedp.CSS, testID string) {
	p.t.Helper()
	p.run(
		chromedp.SetAttributeValue(chromedp.CSS("body"), "data-left", "1"),
		chromedp.Click(button),
		chromedp.WaitVisible(chromedp.CSS(`body:not([data-left]) [data-testid="`+testID+`"]`)),
	)
}

// look checks the current page at 1280 and at 390 px: nothing may be
// wider than the viewport (no sideways scrolling on a phone), and a
// full-page screenshot is saved for people to look at when
// LINKQR_TEST_SCREENSHOTS names a directory.
func (p *pilot) look(name string) {
	p.t.Helper()
	for _, width := range []int64{390, 1280} {
		p.run(chromedp.EmulateViewport(width, 900))
		sw, err := chromedp.Run(p.ctx, chromedp.Evaluate[int64](`document.documentElement.scrollWidth`))
		if err != nil {
			p.t.Fatal(err)
		}
		if sw > width {
			p.t.Errorf("%s at %d px: the page is %d px wide (scrolls sideways)", name, width, sw)
		}
		// Nor may a table scroll sideways inside its box.
		wide, err := chromedp.Run(p.ctx, chromedp.Evaluate[int64](`[...document.querySelectorAll(".table-wrap")].filter(e => e.scrollWidth > e.clientWidth + 1).length`))
		if err != nil {
			p.t.Fatal(err)
		}
		if wide > 0 {
			p.t.Errorf("%s at %d px: %d table(s) wider than their box", name, width, wide)
		}
		suffix := "-js"
		if !p.js {
			suffix = "-nojs"
		}
		saveShot(p.t, p.ctx, fmt.Sprintf("%s%s-%d", name, suffix, width))
	}
}

// targets is a stand-in for the sites links point to.
func targets(t *testing.T) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>target</title><h1 id="where">Target %s</h1>`, strings.TrimPrefix(r.URL.Path, "/"))
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestBrowserLinkWalk(t *testing.T) {
	t.Parallel()
	walkLink(t, true)
}

func TestBrowserLinkWalkWithoutJavaScript(t *testing.T) {
	t.Parallel()
	walkLink(t, false)
}

// walkLink is a link's whole life in a real browser: sign up, create a
// link in the form (a bad target first: the API's message next to the
// field), copy its short URL, follow it (a scan, seen in the totals and
// the chart once the buffer is flushed), re-point it (the next redirect
// goes to the new target; the page shows the previous one), pause (410 that
// says paused), resume, design a navy-on-white ECC H code and decode the
// downloaded PNG, delete through the confirmation page (410 "no longer
// available"). With js false, script execution is off in the page and
// every form is a plain submit.
func walkLink(t *testing.T, js bool) {
	ctx := chromiumUser(t)
	srv := testkit.StartServer(t)
	p := &pilot{t: t, ctx: ctx, srv: srv, js: js}
	site := targets(t)
	targetA, targetB := site.URL+"/A", site.URL+"/B"
	if !js {
		if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatal(err)
		}
	}
	dlg := answerDialogs(ctx) // pausing asks first
	dlg.accept.Store(true)

	email := newEmail("walker")
	p.run(chromedp.Navigate(srv.URL + "/login"))
	p.look("signin")
	p.run(chromedp.Navigate(srv.URL + "/signup"))
	p.look("signup")
	p.run(
		chromedp.SendKeys(css("signup-email"), email),
		chromedp.SendKeys(css("signup-password"), password),
		chromedp.SendKeys(css("signup-workspace"), "Walk Co"),
	)
	p.submit(css("signup-submit"), "new-link-form") // sign-up signs in
	p.run(chromedp.WaitVisible(css("links-empty")))
	p.look("links-empty")
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	wsExt := regexp.MustCompile(`/w/(ws_[0-9a-z]+)/links`).FindStringSubmatch(loc)
	if wsExt == nil {
		t.Fatalf("after sign-in at %s, want the links page", loc)
	}
	wsID, _ := id.Parse(id.Workspace, wsExt[1])

	// A bad target: the API's message, next to the field; nothing created.
	p.run(chromedp.SendKeys(css("new-target"), "ftp://example.com/menu"), chromedp.SendKeys(css("new-title"), "Spring menu"))
	p.submit(css("new-link-submit"), "new-target-error")
	if got := p.text("new-target-error"); got != "The target URL must be an absolute http or https URL." {
		t.Errorf("target error: %q", got)
	}
	if v, _ := chromedp.Run(ctx, chromedp.Value(css("new-title"))); v != "Spring menu" {
		t.Errorf("the title was not kept after the error: %q", v)
	}
	p.look("links-new-error")
	p.run(chromedp.SetValue(css("new-target"), targetA))
	// Creating stays on the list, whose message names the new link and
	// links to its page.
	p.submit(css("new-link-submit"), "flash-link")
	if got := p.text("flash-ok"); !strings.HasPrefix(got, "Link created: Spring menu — ") || !strings.HasSuffix(got, " now redirects to "+targetA+".") {
		t.Errorf("flash after creating: %q", got)
	}
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.HasSuffix(loc, "/w/"+wsExt[1]+"/links") {
		t.Errorf("after creating at %s, want the links list", loc)
	}
	p.run(chromedp.WaitVisible(css("link-row")))
	p.look("links-created")
	p.submit(css("flash-link"), "link-page")
	linkURL, _ := chromedp.Run(ctx, chromedp.Location())
	shortURL := p.text("short-url")
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(srv.URL) + `/[A-Za-z0-9]{7}$`).MatchString(shortURL) {
		t.Fatalf("short URL on the link page: %q", shortURL)
	}
	p.run(chromedp.WaitVisible(css("analytics-empty")))
	p.look("link-new")

	// Copy: with JavaScript the button puts the short URL on the clipboard
	// (captured here; a headless clipboard is not readable); without, the
	// button is hidden and the URL is there to select.
	if js {
		p.eval(`window.__copied = ""; navigator.clipboard.writeText = async (s) => { window.__copied = s; }; ""`)
		p.run(chromedp.Click(css("copy-short-url")))
		wait.Until(t, 5*time.Second, func() (bool, string) {
			got := p.eval(`window.__copied`)
			return got == shortURL, fmt.Sprintf("copied %q, want %q", got, shortURL)
		})
	} else {
		p.run(chromedp.WaitNotVisible(css("copy-short-url")))
	}

	// Follow it: a scan, and the target opens.
	p.run(chromedp.Navigate(shortURL), chromedp.WaitVisible(chromedp.CSS("#where")))
	if got, _ := chromedp.Run(ctx, chromedp.Location()); got != targetA {
		t.Fatalf("the short URL led to %s, want %s", got, targetA)
	}
	// Scans are buffered: reload the link page until the totals show it.
	wait.Until(t, 20*time.Second, func() (bool, string) {
		p.run(chromedp.Navigate(linkURL), chromedp.WaitVisible(css("totals")))
		got := p.text("total-scans")
		return got == "1", fmt.Sprintf("the scan did not show up in the totals: %q", got)
	})
	if u, b := p.text("total-unique"), p.text("total-bots"); u != "1" || b != "0" {
		t.Errorf("unique %s, bots %s; want 1 and 0", u, b)
	}
	bars := p.eval(`JSON.stringify([...document.querySelectorAll('[data-testid="chart-bar"]')].map(b => b.dataset.scans))`)
	if strings.Count(bars, `"1"`) != 1 || p.text("chart-max") != "1" || p.eval(`document.querySelector('[data-testid="chart-bar"][data-max]').dataset.scans`) != "1" {
		t.Errorf("chart bars %s, max %q: want one bar of 1 scan, marked as the maximum", bars, p.text("chart-max"))
	}
	p.look("link-scanned")
	if js {
		// A preset range applies as soon as it is chosen: the last 24 hours by hour.
		// (SetValue fires input and change, as choosing an option does.)
		p.run(chromedp.SetAttributeValue(chromedp.CSS("body"), "data-left", "1"), chromedp.SetValue(css("range-select"), "24h"))
		p.run(chromedp.WaitVisible(chromedp.CSS(`body:not([data-left]) [data-testid="chart"]`)))
		if n := p.eval(`String(document.querySelectorAll('[data-testid="chart-bar"]').length)`); n != "24" || p.text("total-scans") != "1" {
			t.Errorf("last 24 hours: %s bars, %s scans", n, p.text("total-scans"))
		}
		if hidden := p.eval(`String(document.querySelector('.custom-range').hidden)`); hidden != "true" {
			t.Error("the custom days show for a preset range")
		}
	}

	// Re-point: the next redirect goes to B, the page remembers A.
	p.run(chromedp.SetValue(css("edit-target"), targetB))
	p.submit(css("edit-submit"), "flash-ok")
	if got := p.text("previous-target"); !strings.Contains(got, targetA) {
		t.Errorf("previous target line: %q", got)
	}
	p.run(chromedp.Navigate(shortURL), chromedp.WaitVisible(chromedp.CSS("#where")))
	if got := p.text2("#where"); got != "Target B" {
		t.Fatalf("after re-pointing the short URL opens %q", got)
	}

	// Pause: 410 saying paused; resume: redirects again.
	p.run(chromedp.Navigate(linkURL), chromedp.WaitVisible(css("pause-link")))
	if js {
		seen := dlg.seen.Load()
		p.submit(css("pause-link"), "paused-notice") // through the confirm() dialog
		if dlg.seen.Load() != seen+1 || !strings.HasPrefix(dlg.last.Load().(string), "Pause ") {
			t.Errorf("pausing did not ask first: %v", dlg.last.Load())
		}
	} else {
		p.submit(css("pause-link"), "confirm-page") // a confirmation page instead
		p.submit(css("confirm-submit"), "paused-notice")
	}
	p.look("link-paused")
	p.expectGone(shortURL, "This link is paused")
	p.look("redirect-paused")
	p.run(chromedp.Navigate(linkURL), chromedp.WaitVisible(css("resume-link")))
	p.submit(css("resume-link"), "pause-link")
	p.run(chromedp.Navigate(shortURL), chromedp.WaitVisible(chromedp.CSS("#where")))
	if got := p.text2("#where"); got != "Target B" {
		t.Fatalf("after resuming the short URL opens %q", got)
	}

	// QR designer: navy on white, ECC H.
	p.run(chromedp.Navigate(linkURL), chromedp.WaitVisible(css("qr-designer")),
		chromedp.SetValue(css("qr-fg"), "#000080"), chromedp.SetValue(css("qr-ecc"), "H"))
	if js {
		// The preview follows the form at once (SetValue fired input).
		if src := p.eval(`document.querySelector('[data-testid="qr-designer-preview"]').getAttribute("src")`); !strings.Contains(src, "ecc=H") || !strings.Contains(src, "fg=000080") {
			t.Errorf("live preview src %q", src)
		}
	}
	p.submit(css("qr-apply"), "qr-designer-preview")
	if got := p.text("qr-contrast"); !strings.HasPrefix(got, "Contrast 16:1.") {
		t.Errorf("contrast line %q", got)
	}
	p.look("link-qr")
	href := p.eval(`document.querySelector('[data-testid="qr-download-png"]').href`)
	img, name := p.download(href)
	code := shortURL[strings.LastIndex(shortURL, "/")+1:]
	if name != code+"-512px-m4-eccH-000080-on-ffffff.png" {
		t.Errorf("download name %q", name)
	}
	if got := testkit.DecodeQR(t, img); got != shortURL+"?qr=1" {
		t.Fatalf("the downloaded PNG encodes %q, want %q", got, shortURL+"?qr=1")
	}
	if !hasColour(img, color.RGBA{0, 0, 0x80, 0xff}) {
		t.Error("the downloaded PNG has no navy module")
	}

	// Delete, through the confirmation page.
	p.run(chromedp.Navigate(linkURL), chromedp.WaitVisible(css("delete-link")))
	p.submit(css("delete-link"), "link-delete-page")
	if got := p.text("link-delete-page"); !strings.Contains(got, "can never be used again") {
		t.Errorf("confirmation page: %q", got)
	}
	p.look("link-delete")
	p.submit(css("confirm-delete"), "links-empty")
	p.look("links-after-delete")
	p.expectGone(shortURL, "no longer available")

	// The UI's changes are the API's events, previous_attributes included.
	var types []string
	var repoint map[string]any
	rows, err := srv.Pool.Query(context.Background(), `SELECT type, data FROM events WHERE workspace_id = $1 ORDER BY id`, wsID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var typ string
		var data []byte
		if err := rows.Scan(&typ, &data); err != nil {
			t.Fatal(err)
		}
		types = append(types, typ)
		var d map[string]any
		_ = json.Unmarshal(data, &d)
		if prev, _ := d["previous_attributes"].(map[string]any); prev != nil && prev["target_url"] != nil {
			repoint = prev
		}
	}
	rows.Close()
	if want := "link.created link.updated link.updated link.updated link.deleted"; strings.Join(types, " ") != want {
		t.Errorf("events %v, want %s", types, want)
	}
	if len(repoint) != 1 || repoint["target_url"] != targetA {
		t.Errorf("previous_attributes of the re-point: %v", repoint)
	}
}

// text2 is the text of a CSS selector.
func (p *pilot) text2(sel string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		p.t.Fatal(err)
	}
	return strings.TrimSpace(s)
}

// expectGone opens a short URL that must answer 410 with a page saying want.
func (p *pilot) expectGone(shortURL, want string) {
	p.t.Helper()
	resp, err := chromedp.Run(p.ctx, chromedp.NavigateResponse(shortURL))
	if err != nil {
		p.t.Fatal(err)
	}
	if resp.Status != http.StatusGone {
		p.t.Fatalf("%s: status %d, want 410", shortURL, resp.Status)
	}
	if body := p.text2("main"); !strings.Contains(body, want) {
		p.t.Errorf("%s: page %q, want %q", shortURL, body, want)
	}
}

// download fetches a URL with the browser's cookies and returns the PNG
// and its file name.
func (p *pilot) download(href string) (image.Image, string) {
	p.t.Helper()
	cookies, err := chromedp.Call(p.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{p.srv.URL}})
	if err != nil {
		p.t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, href, nil)
	for _, c := range cookies.Cookies {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
		p.t.Fatalf("download %s: %d %v", href, resp.StatusCode, resp.Header)
	}
	m := regexp.MustCompile(`^attachment; filename="([^"]+)"$`).FindStringSubmatch(resp.Header.Get("Content-Disposition"))
	if m == nil {
		p.t.Fatalf("Content-Disposition %q", resp.Header.Get("Content-Disposition"))
	}
	img, err := png.Decode(bytes.NewReader(body))
	if err != nil {
		p.t.Fatal(err)
	}
	if dir := os.Getenv("LINKQR_TEST_SCREENSHOTS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, m[1]), body, 0o644)
	}
	return img, m[1]
}

// hasColour reports whether any pixel of img is c.
func hasColour(img image.Image, c color.RGBA) bool {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if color.RGBAModel.Convert(img.At(x, y)) == c {
				return true
			}
		}
	}
	return false
}

// TestBrowserEveryPageFitsAPhone opens every page of the UI, signed out
// and signed in as an admin whose workspace has a link, a key, a webhook
// and an open invitation, at 390 and 1280 px: no page may be wider than a
// phone's viewport. It also opens the collapsed top bar menu on a phone
// and signs out through it.
func TestBrowserEveryPageFitsAPhone(t *testing.T) {
	t.Parallel()
	ctx := chromiumUser(t)
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	p := &pilot{t: t, ctx: ctx, srv: srv, js: true}
	admin := testkit.NewTenant(t, srv.Pool)
	bg := context.Background()
	ws := "/w/" + admin.WorkspaceExternalID()
	srv.APIKey(t, admin.WorkspaceID)
	hook, err := srv.App.Webhooks.Create(bg, admin.WorkspaceID, webhook.CreateInput{URL: "http://127.0.0.1:9/a/rather/long/path/for/a/webhook/endpoint", Events: []string{"link.updated", "scan.created"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.App.Accounts.Invite(bg, admin.WorkspaceID, &admin.UserID, newEmail("a-rather-long-invitee-address"), account.RoleMember); err != nil {
		t.Fatal(err)
	}
	hookPath := ws + "/settings/webhooks/" + id.Format(id.Webhook, hook.ID)
	if _, err := srv.App.Webhooks.SendTest(bg, admin.WorkspaceID, hook.ID); err != nil {
		t.Fatal(err)
	}
	deliveryPath := ""
	wait.Until(t, 15*time.Second, func() (bool, string) {
		list, _, err := srv.App.Webhooks.ListDeliveries(bg, admin.WorkspaceID, hook.ID, nil, 1)
		if err != nil {
			t.Fatalf("no delivery attempt: %v", err)
		}
		if len(list) == 1 && list[0].Status != webhook.DeliveryPending {
			deliveryPath = hookPath + "/deliveries/" + id.Format(id.Delivery, list[0].ID)
			return true, ""
		}
		return false, fmt.Sprintf("no delivery attempt: %+v", list)
	})

	// Every page visited is checked by axe-core too (WCAG 2.1 A and AA), in a
	// tab of its own: axe is injected with the page's CSP bypassed, which
	// the walk's own tab must not be.
	axeTab := testkit.Tab(ctx, t)
	visit := func(name, path string) {
		t.Helper()
		p.run(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+path), chromedp.WaitReady(chromedp.CSS("body")))
		p.look(name)
		testkit.AxeCheck(axeTab, t, srv.URL+path)
	}
	inv, err := srv.App.Accounts.Invite(bg, admin.WorkspaceID, &admin.UserID, newEmail("another-rather-long-invitee-address"), account.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	resetLink, err := srv.App.Accounts.ResetLink(bg, admin.Email)
	if err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"home": "/", "problems": "/problems", "problem": "/problems/validation-failed", "not-found": "/no/such/page",
		"forgot": "/password/forgot", "reset": strings.TrimPrefix(resetLink, srv.URL),
		"short-code-404": "/NoSuchCode9", "invitation-unknown": "/invitations/" + strings.Repeat("x", 43),
		"signin": "/login", "signup": "/signup"} {
		visit("public-"+name, path)
	}
	// Signing in from an invitation page comes back to it: here, one for
	// another address.
	visit("public-invitation", strings.TrimPrefix(inv.Link, srv.URL))
	p.run(chromedp.Navigate(srv.URL+"/login"), chromedp.SendKeys(css("signin-email"), admin.Email), chromedp.SendKeys(css("signin-password"), admin.Password))
	p.submit(css("signin-submit"), "invitation-link-other")
	b := newBrowser(t, srv)
	b.mustSignIn(admin.Email, admin.Password)
	linkPath := createInForm(t, b, admin.WorkspaceExternalID(), url.Values{
		"target_url": {"https://example.com/a/very/long/target/address/that/does/not/fit/on/a/phone/screen/at/all?with=query&and=more"},
		"title":      {"A link with a long title that wraps on a phone"},
	})
	pages := []struct{ name, path string }{
		{"links", ws + "/links"}, {"links-search", ws + "/links?q=long&status=active"}, {"overview", ws + "/overview"}, {"link", linkPath}, {"link-delete", linkPath + "/delete"},
		{"api-keys", ws + "/settings/api-keys"}, {"api-key-new", ws + "/settings/api-keys/new"},
		{"members", ws + "/settings/members"}, {"webhooks", ws + "/settings/webhooks"}, {"webhook-new", ws + "/settings/webhooks/new"},
		{"webhook", hookPath}, {"webhook-edit", hookPath + "/edit"}, {"webhook-delete", hookPath + "/delete"},
		{"workspace-new", "/w/new"}, {"invitations", "/w/invitations"}, {"signed-in-problems", "/problems"}, {"signed-in-not-found", ws + "/links/lnk_nope"},
		{"docs", "/docs"}, {"account", "/account"}, {"workspace", ws + "/settings/workspace"}, {"qr-style", ws + "/settings/qr"},
		{"invitation-other-address", strings.TrimPrefix(inv.Link, srv.URL)}, {"webhook-delivery", deliveryPath},
		{"settings", ws + "/settings"}, {"domains", ws + "/settings/domains"}, {"utm-templates", ws + "/settings/utm-templates"},
		{"audit", ws + "/settings/audit"}, {"security", ws + "/settings/security"}, {"oauth-clients", ws + "/settings/oauth-clients"},
		{"links-import", ws + "/links/import"},
	}
	for _, pg := range pages {
		visit(pg.name, pg.path)
	}
	// Public pages show the signed-in account too.
	p.run(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/problems"), chromedp.WaitVisible(css("nav-email")))
	if got := p.text("nav-email"); got != admin.Email {
		t.Errorf("account on /problems: %q", got)
	}
	p.run(chromedp.Navigate(srv.URL+"/docs"), chromedp.WaitVisible(css("nav-email")))

	// A visible focus ring of at least 3:1 against the page, on an input
	// and on the next control reached with the keyboard.
	p.run(chromedp.Navigate(srv.URL+ws+"/links"), chromedp.WaitVisible(css("new-title")), chromedp.Focus(css("new-title")))
	p.checkFocusRing("the title input")
	p.run(chromedp.KeyEvent("\t"))
	p.checkFocusRing("the control after it")

	// On a phone the top bar is one button; the menu opens without a
	// scroll and signs out.
	p.run(chromedp.EmulateViewport(390, 900), chromedp.Navigate(srv.URL+ws+"/links"), chromedp.WaitVisible(css("menu-button")))
	if vis, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('[data-testid="sign-out"]').checkVisibility()`)); vis {
		t.Error("the menu is open on a phone before it is tapped")
	}
	p.run(chromedp.Click(css("menu-button")), chromedp.WaitVisible(css("sign-out")))
	if sw, _ := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.documentElement.scrollWidth`)); sw > 390 {
		t.Errorf("the open menu is %d px wide", sw)
	}
	saveShot(t, ctx, "menu-open-390")
	p.submit(css("sign-out"), "nav-signin")
}

// checkFocusRing checks the focused element's outline: drawn, at least 2 px,
// and of a colour with a contrast of at least 3:1 against white (the cards
// and inputs) — WCAG 2.2's focus appearance.
func (p *pilot) checkFocusRing(what string) {
	p.t.Helper()
	ring, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`(() => { const s = getComputedStyle(document.activeElement);
		return [document.activeElement.tagName, s.outlineStyle, s.outlineWidth, s.outlineColor]; })()`))
	if err != nil {
		p.t.Fatal(err)
	}
	var r, g, b int
	if _, err := fmt.Sscanf(ring[3], "rgb(%d, %d, %d)", &r, &g, &b); err != nil {
		p.t.Fatalf("%s (%s): outline colour %q", what, ring[0], ring[3])
	}
	width, _ := strconv.ParseFloat(strings.TrimSuffix(ring[2], "px"), 64)
	contrast := qr.ContrastRatio(color.RGBA{uint8(r), uint8(g), uint8(b), 0xff}, color.RGBA{0xff, 0xff, 0xff, 0xff})
	if ring[1] == "none" || width < 2 || contrast < 3 {
		p.t.Errorf("%s (%s): outline %s %s %s, contrast %.2f:1 against white", what, ring[0], ring[1], ring[2], ring[3], contrast)
	}
}
