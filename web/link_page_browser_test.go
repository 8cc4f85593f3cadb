package web_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/testkit"
)

// TestBrowserLinkPage is the link page a marketer lives in, with
// JavaScript, at 1280 and 390 px: the first screen shows the numbers (the
// analytics come before destinations, QR code and details), axe finds
// nothing; the Destinations card adds, removes and moves rules and split
// variants in place (no page load: a marker on the window survives);
// a refused save keeps the password and every row's values and shows one
// error under its row; the fixed save stores codes typed in lower case.
// The QR designer's hex fields follow its colour pickers, and every card
// of the Settings pages has one width. Screenshots of the link page, the
// destinations editor and the designer at both widths go to
// LINKQR_TEST_SCREENSHOTS, else the test's artifact directory (their
// paths are logged).
func TestBrowserLinkPage(t *testing.T) {
	t.Parallel()
	ctx := chromiumUser(t)
	srv := testkit.StartServer(t)
	p := &pilot{t: t, ctx: ctx, srv: srv, js: true}
	tn := testkit.NewTenant(t, srv.Pool)
	token := srv.APIKey(t, tn.WorkspaceID, "links:read", "links:write")
	l := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/poster","title":"Spring poster"}`), 201)
	linkID, ok := id.Parse(id.Link, l["id"].(string))
	if !ok {
		t.Fatalf("link id %v", l["id"])
	}
	now := time.Now().UTC()
	addScans(t, srv, tn.WorkspaceID, linkID, now.Add(-time.Hour), 7, "DE", "qr")
	addScans(t, srv, tn.WorkspaceID, linkID, now.Add(-30*time.Hour), 3, "FR", "link")
	foldScans(t, srv, tn.WorkspaceID, 10)
	ws := "/w/" + tn.WorkspaceExternalID()
	linkURL := srv.URL + ws + "/links/" + l["id"].(string)

	p.run(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/login"),
		chromedp.SendKeys(css("signin-email"), tn.Email), chromedp.SendKeys(css("signin-password"), tn.Password))
	p.submit(css("signin-submit"), "nav-email")

	// Numbers first: the totals are on the first screen, the sections in
	// order, nothing wider than the viewport.
	for _, width := range []int64{1280, 390} {
		p.run(chromedp.EmulateViewport(width, 900), chromedp.Navigate(linkURL), chromedp.WaitVisible(css("totals")))
		if got := p.text("total-scans"); got != "10" {
			t.Errorf("at %d px the page shows %q scans, want 10", width, got)
		}
		bottom := p.number(`document.querySelector('[data-testid="total-scans"]').getBoundingClientRect().bottom`)
		if bottom <= 0 || bottom > 900 {
			t.Errorf("at %d px the scan total ends %.0f px down: not on the first screen of 900 px", width, bottom)
		}
		order := p.eval(`[...document.querySelectorAll('#analytics, #destinations, #qr, #details')].map(e => e.id).join(" ")`)
		if order != "analytics destinations qr details" {
			t.Errorf("at %d px the sections come as %q", width, order)
		}
		if sw := p.number(`document.documentElement.scrollWidth`); sw > float64(width) {
			t.Errorf("at %d px the link page is %.0f px wide", width, sw)
		}
		p.shot(fmt.Sprintf("link-page-%d", width), "")
		testkit.AxeCheck(ctx, t, linkURL)
	}

	// The section links lead to their sections.
	p.run(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(linkURL), chromedp.WaitVisible(css("link-sections")))
	p.run(chromedp.Click(chromedp.CSS(`[data-testid="link-sections"] a[href="#destinations"]`)))
	if top := p.number(`document.getElementById("destinations").getBoundingClientRect().top`); top < 0 || top > 120 {
		t.Errorf("after the Destinations link the card starts %.0f px down", top)
	}

	// Rows in place: three rules added, the third removed, the second
	// moved up; a split of two, a third variant added and removed.
	p.run(chromedp.WaitVisible(css("no-rules")))
	p.eval(`window.__stay = "still here"; ""`)
	p.run(chromedp.Click(css("add-rule")), chromedp.WaitVisible(css("rule-0")))
	p.run(chromedp.Click(css("rule-device-0-mobile")), chromedp.SetValue(css("rule-country-0"), "at, de"),
		chromedp.SetValue(css("rule-target-0"), "https://example.com/at"))
	p.run(chromedp.Click(css("add-rule")), chromedp.WaitVisible(css("rule-1")))
	p.run(chromedp.Click(css("rule-os-1-iOS")), chromedp.SetValue(css("rule-target-1"), "https://example.com/ios"))
	p.run(chromedp.Click(css("add-rule")), chromedp.WaitVisible(css("rule-2")))
	p.run(chromedp.SetValue(css("rule-target-2"), "https://example.com/gone"))
	if p.visible("no-rules") {
		t.Error("“No rules” is still shown")
	}
	p.run(chromedp.Click(css("rule-remove-2")), chromedp.WaitNotPresent(css("rule-2")))
	p.run(chromedp.Click(css("rule-up-1")))
	if got := p.value("rule-target-0"); got != "https://example.com/ios" {
		t.Errorf("after moving rule 2 up, rule 1 goes to %q", got)
	}
	if !p.checked("rule-os-0-iOS") || !p.checked("rule-device-1-mobile") || p.value("rule-country-1") != "at, de" {
		t.Error("the rules' values did not move with them")
	}
	names := p.eval(`[...document.querySelectorAll('[data-list="rule"] input:not([type=checkbox]), [data-list="rule"] input:checked')].map(e => e.name).join(" ")`)
	if names != "rule0_os rule0_country rule0_target rule1_device rule1_country rule1_target" {
		t.Errorf("field names after the moves: %q", names)
	}
	if n := p.eval(`document.querySelector('input[name="rules"]').value`); n != "2" {
		t.Errorf("the form counts %s rules, want 2", n)
	}
	if p.eval(`String(document.querySelector('[data-testid="rule-up-0"]').disabled && document.querySelector('[data-testid="rule-down-1"]').disabled && !document.querySelector('[data-testid="rule-down-0"]').disabled)`) != "true" {
		t.Error("the first rule can move up or the last down")
	}
	p.run(chromedp.Click(css("add-variant")), chromedp.WaitVisible(css("variant-1")))
	if w0, w1 := p.value("variant-weight-0"), p.value("variant-weight-1"); w0 != "50" || w1 != "50" {
		t.Errorf("a new split weighs %s/%s, want 50/50", w0, w1)
	}
	p.run(chromedp.Click(css("add-variant")), chromedp.WaitVisible(css("variant-2")))
	p.run(chromedp.Click(css("variant-remove-2")), chromedp.WaitNotPresent(css("variant-2")))
	p.run(chromedp.SetValue(css("variant-target-0"), "https://example.com/a"), chromedp.SetValue(css("variant-target-1"), "https://example.com/b"))
	if got := p.eval(`String(window.__stay)`); got != "still here" {
		t.Fatalf("adding, removing and moving rows loaded a page (the window's marker is %q)", got)
	}
	p.shotsOf("destinations-editor", "destinations")

	// A refused save: one error under its row; the password and every
	// value typed are still there.
	p.run(chromedp.SetValue(css("rule-country-1"), "at, Germany"), chromedp.SetValue(css("dest-password"), "poster-pw"), chromedp.SetValue(css("dest-max-scans"), "500"))
	p.eval(`document.querySelector('[data-testid="rule-target-1"]').value = ""; ""`) // (SetValue cannot set "")
	p.submit(css("save-destinations"), "rule-error-1")
	if got := p.value("dest-password"); got != "poster-pw" {
		t.Errorf("after the refusal the password field holds %q", got)
	}
	if got := p.value("rule-country-1"); got != "AT, Germany" {
		t.Errorf("after the refusal rule 2's countries are %q", got)
	}
	if got := p.text("rule-error-1"); got != "Target URL must be an absolute http or https URL." {
		t.Errorf("rule 2's error (its first of two): %q", got)
	}
	if p.eval(`String(document.getElementById("rule1-country").getAttribute("aria-invalid") + " " + document.getElementById("rule1-target").getAttribute("aria-invalid"))`) != "true true" {
		t.Error("rule 2's refused fields are not marked")
	}
	if p.value("rule-target-0") != "https://example.com/ios" || !p.checked("rule-os-0-iOS") || !p.checked("rule-device-1-mobile") ||
		p.value("variant-target-1") != "https://example.com/b" || p.value("dest-max-scans") != "500" {
		t.Error("a value typed before the refusal is gone")
	}
	if n := p.eval(`String(document.querySelectorAll('[data-testid="rule-1"] .row-error').length + "/" + document.querySelectorAll('.row-error').length)`); n != "1/1" {
		t.Errorf("row errors (rule 2 / all): %s, want one", n)
	}
	for _, width := range []int64{1280, 390} {
		p.run(chromedp.EmulateViewport(width, 900))
		// Under the row's fields, across the row; the buttons keep their
		// place and width.
		geo := p.eval(`(() => { const row = document.querySelector('[data-testid="rule-1"]'), r = (e) => e.getBoundingClientRect();
			const err = r(row.querySelector('.row-error')), fields = r(row.querySelector('.rule-fields')), buttons = r(row.querySelector('.row-buttons'));
			const other = r(document.querySelector('[data-testid="rule-0"] .row-buttons'));
			return [err.top >= fields.bottom, Math.abs(err.left - fields.left) < 2, buttons.bottom <= fields.top, Math.abs(buttons.width - other.width) < 1].join(" "); })()`)
		if geo != "true true true true" {
			t.Errorf("at %d px the row error's place (under the fields, aligned, buttons above, buttons as wide as rule 1's): %s", width, geo)
		}
	}
	p.look("link-destinations-error")
	p.shotsOf("destinations-error", "destinations")

	// Fixed: saved, the codes upper-cased.
	p.run(chromedp.EmulateViewport(1280, 900), chromedp.SetValue(css("rule-country-1"), "at de"), chromedp.SetValue(css("rule-target-1"), "https://example.com/at"))
	p.submit(css("save-destinations"), "flash-ok")
	got := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/links/"+l["id"].(string), token, ""), 200)
	if rules := fmt.Sprint(got["rules"]); rules != "[map[if:map[os:[iOS]] target_url:https://example.com/ios] map[if:map[country:[AT DE] device:[mobile]] target_url:https://example.com/at]]" ||
		got["password_protected"] != true || got["max_scans"] != float64(500) || len(got["split"].([]any)) != 2 {
		t.Errorf("saved %v %v %v %v", got["rules"], got["password_protected"], got["max_scans"], got["split"])
	}
	if v := p.value("dest-password"); v != "" {
		t.Errorf("after saving the password field holds %q", v)
	}

	// QR designer: a hex typed sets the picker; a colour picked writes the hex.
	p.run(chromedp.Navigate(linkURL+"#qr"), chromedp.WaitVisible(css("qr-fg-hex")))
	// (Typed as a person does: an input event per key, change on leaving.
	// SetValue would refuse the field's own rewrite of #0a3 to #00aa33.)
	p.run(chromedp.Focus(css("qr-fg-hex")), chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="qr-fg-hex"]').select()`),
		chromedp.SendKeys(css("qr-fg-hex"), "#0a3"), chromedp.Focus(css("qr-bg-hex")))
	if got := p.value("qr-fg"); got != "#00aa33" {
		t.Errorf("after typing #0a3 the picker shows %q", got)
	}
	if got := p.value("qr-fg-hex"); got != "#00aa33" {
		t.Errorf("after typing #0a3 and leaving, the field shows %q", got)
	}
	if src := p.eval(`document.querySelector('[data-testid="qr-designer-preview"]').getAttribute("src")`); !strings.Contains(src, "fg=00aa33") {
		t.Errorf("preview after typing a hex: %q", src)
	}
	p.run(chromedp.SetValue(css("qr-bg"), "#fffff0"))
	if got := p.value("qr-bg-hex"); got != "#fffff0" {
		t.Errorf("after picking a background the hex field shows %q", got)
	}
	p.shotsOf("qr-designer", "qr-designer")

	// Settings: one card width on every page.
	for _, page := range []string{"/settings/workspace", "/settings/api-keys/new", "/settings/members", "/settings/domains", "/settings/qr", "/settings/webhooks/new"} {
		for _, width := range []int64{1280, 390} {
			p.run(chromedp.EmulateViewport(width, 900), chromedp.Navigate(srv.URL+ws+page), chromedp.WaitVisible(chromedp.CSS(".settings-body")))
			widths := p.eval(`(() => { const body = document.querySelector(".settings-body").getBoundingClientRect().width;
				return [...new Set([...document.querySelectorAll(".settings-body .card")].map(c => Math.round(c.getBoundingClientRect().width - body)))].join(" "); })()`)
			if widths != "0" {
				t.Errorf("%s at %d px: cards differ from the settings column by %q px", page, width, widths)
			}
		}
	}
}

// number evaluates a JavaScript number.
func (p *pilot) number(js string) float64 {
	p.t.Helper()
	f, err := strconv.ParseFloat(p.eval(`String(`+js+`)`), 64)
	if err != nil {
		p.t.Fatalf("%s: %v", js, err)
	}
	return f
}

// value is the value of the input testID.
func (p *pilot) value(testID string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Value(css(testID)))
	if err != nil {
		p.t.Fatalf("value of %s: %v", testID, err)
	}
	return v
}

// visible reports whether testID is shown.
func (p *pilot) visible(testID string) bool {
	p.t.Helper()
	return p.eval(`String(!!document.querySelector('[data-testid="`+testID+`"]')?.checkVisibility())`) == "true"
}

// shotsOf saves screenshots of the element testID at 1280 and 390 px.
// The link page's sticky section bar is let go meanwhile: a capture taller
// than the window would show it across the element.
func (p *pilot) shotsOf(name, testID string) {
	p.t.Helper()
	p.eval(`document.querySelectorAll(".section-nav").forEach(n => n.style.position = "static"); ""`)
	for _, width := range []int64{1280, 390} {
		p.run(chromedp.EmulateViewport(width, 900))
		p.shot(fmt.Sprintf("%s-%d", name, width), css(testID))
	}
	p.eval(`document.querySelectorAll(".section-nav").forEach(n => n.style.position = ""); ""`)
	p.run(chromedp.EmulateViewport(1280, 900))
}

// shot saves a screenshot of sel (the whole page when empty) as
// <name>.png in LINKQR_TEST_SCREENSHOTS, else in the test's artifact
// directory, and logs its path.
func (p *pilot) shot(name string, sel chromedp.CSS) {
	p.t.Helper()
	dir := os.Getenv("LINKQR_TEST_SCREENSHOTS")
	if dir == "" {
		dir = p.t.ArtifactDir()
	}
	var (
		png []byte
		err error
	)
	if sel == "" {
		png, err = chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	} else {
		png, err = chromedp.Run(p.ctx, chromedp.Screenshot(sel))
	}
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("screenshot %s", path)
}
