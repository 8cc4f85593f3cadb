package web_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/testkit"
)

// TestBrowserDestinations: without JavaScript, the link page's
// Destinations card adds two rules (ticking an OS, a device), moves the
// second up, refuses a bad country at its row (keeping the password
// typed), adds a 50/50 split, a password and a scan limit, saves codes
// typed in lower case, and previews a phone in Germany ("test as"); then the short URL
// asks for the password and, given it, leads to the rule's target. Every
// page is looked at in 390 and 1280 px.
func TestBrowserDestinations(t *testing.T) {
	t.Parallel()
	ctx := chromiumUser(t)
	srv := testkit.StartServer(t)
	p := &pilot{t: t, ctx: ctx, srv: srv, js: false}
	site := targets(t)
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	p.run(chromedp.Navigate(srv.URL + "/signup"))
	p.run(
		chromedp.SendKeys(css("signup-email"), newEmail("dest")),
		chromedp.SendKeys(css("signup-password"), password),
		chromedp.SendKeys(css("signup-workspace"), "Poster Co"),
	)
	p.submit(css("signup-submit"), "new-link-form")
	p.run(chromedp.SetValue(css("new-target"), site.URL+"/home"))
	p.submit(css("new-link-submit"), "flash-link")
	p.submit(css("flash-link"), "link-page")
	p.run(chromedp.WaitVisible(css("no-rules")))

	p.submit(css("add-rule"), "rule-0")
	p.run(chromedp.Click(css("rule-os-0-iOS")), chromedp.SetValue(css("rule-target-0"), site.URL+"/ios"))
	p.submit(css("add-rule"), "rule-1")
	p.run(chromedp.SetValue(css("rule-country-1"), "Germany"), chromedp.Click(css("rule-device-1-mobile")),
		chromedp.SetValue(css("rule-target-1"), site.URL+"/de"))
	p.submit(css("rule-up-1"), "rule-1") // the German rule first
	if v, _ := chromedp.Run(ctx, chromedp.Value(css("rule-country-0"))); v != "Germany" {
		t.Fatalf("after moving up, rule 1's country is %q", v)
	}
	if !p.checked("rule-device-0-mobile") || !p.checked("rule-os-1-iOS") || p.checked("rule-os-0-iOS") {
		t.Error("the ticked boxes did not move with their rules")
	}
	p.submit(css("add-variant"), "variant-1")
	p.run(chromedp.SetValue(css("variant-target-0"), site.URL+"/a"), chromedp.SetValue(css("variant-target-1"), site.URL+"/b"),
		chromedp.SetValue(css("dest-password"), "poster"), chromedp.SetValue(css("dest-max-scans"), "500"))
	p.submit(css("save-destinations"), "rule-error-0")
	if got := p.text("rule-error-0"); !strings.Contains(got, "Countries, value 1, must be an ISO 3166-1 alpha-2 country code") {
		t.Errorf("the bad country's error: %q", got)
	}
	// Nothing typed is lost: the password of this post is there again.
	if v, _ := chromedp.Run(ctx, chromedp.Value(css("dest-password"))); v != "poster" {
		t.Errorf("after the refusal the password field holds %q", v)
	}
	p.look("destinations-error")
	// Codes in any case: "de, at" is DE and AT.
	p.run(chromedp.SetValue(css("rule-country-0"), "de, at"))
	p.submit(css("save-destinations"), "flash-ok")
	if got := p.text("flash-ok"); !strings.HasPrefix(got, "Destinations saved") {
		t.Errorf("flash: %q", got)
	}
	if p.text("password-set") == "" {
		t.Error("the card does not say the link has a password")
	}
	if v, _ := chromedp.Run(ctx, chromedp.Value(css("dest-max-scans"))); v != "500" {
		t.Errorf("scan limit shown: %q", v)
	}
	if v, _ := chromedp.Run(ctx, chromedp.Value(css("rule-country-0"))); v != "DE, AT" {
		t.Errorf("countries saved as %q, want DE, AT", v)
	}
	if v, _ := chromedp.Run(ctx, chromedp.Value(css("dest-password"))); v != "" {
		t.Errorf("after saving the password field holds %q", v)
	}
	// Test as a phone in Germany (the preset): the German rule.
	p.submit(css("test-as"), "test-result")
	if got := p.text("test-result-url"); got != site.URL+"/de" {
		t.Errorf("a phone in Germany goes to %q", got)
	}
	p.run(chromedp.SetValue(css("test-country"), "FR"))
	p.submit(css("test-as"), "test-result")
	if got := p.text("test-result-url"); got != site.URL+"/ios" {
		t.Errorf("an iPhone in France goes to %q", got)
	}
	p.run(chromedp.SetValue(css("test-os"), "Android"))
	p.submit(css("test-as"), "test-result")
	if got := p.text("test-result-url"); !strings.Contains(got, "50 % "+site.URL+"/a") {
		t.Errorf("an Android phone in France: %q", got)
	}
	p.look("destinations")
	shortURL := p.text("short-url")
	if !regexp.MustCompile(`/[A-Za-z0-9]{7}$`).MatchString(shortURL) {
		t.Fatalf("short URL %q", shortURL)
	}

	// The short URL asks for the password (the browser is a desktop:
	// no rule matches it, so it lands on a split variant).
	p.run(chromedp.Navigate(shortURL), chromedp.WaitVisible(css("password-form")))
	p.look("password-form")
	p.run(chromedp.SendKeys(chromedp.CSS("#link-password"), "wrong"))
	p.submit(chromedp.CSS(`[data-testid="password-form"] button`), "password-error")
	p.look("password-wrong")
	p.run(chromedp.SetValue(chromedp.CSS("#link-password"), "poster"))
	p.run(chromedp.SetAttributeValue(chromedp.CSS("body"), "data-left", "1"), chromedp.Submit(chromedp.CSS("#link-password")))
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	if err := chromedp.Do(tctx, chromedp.WaitVisible(chromedp.CSS("#where"))); err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.outerHTML`))
		t.Fatalf("after the right password: at %s: %s", loc, body)
	}
	cancel()
	if got, _ := chromedp.Run(ctx, chromedp.Location()); got != site.URL+"/a" && got != site.URL+"/b" {
		t.Errorf("after the password: %s, want a split variant", got)
	}
	// The cookie lets the next visit straight through.
	p.run(chromedp.Navigate(shortURL), chromedp.WaitVisible(chromedp.CSS("#where")))
}

// checked reports whether the checkbox testID is ticked.
func (p *pilot) checked(testID string) bool {
	p.t.Helper()
	return p.eval(`String(document.querySelector('[data-testid="`+testID+`"]').checked)`) == "true"
}
