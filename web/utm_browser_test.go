package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/linkqr/linkqr/internal/testkit"
)

// TestBrowserUTMTemplatesAndFill: in Chromium with JavaScript, a template
// is added on Settings → UTM templates; in the New link form choosing it
// fills the five fields at once (the no-JavaScript "Apply" is hidden);
// Enter in the target field then creates the link (the form's own submit
// button, not "Apply"), which redirects with the parameters merged. The
// pages are looked at 1280 and 390 px and pass axe.
func TestBrowserUTMTemplatesAndFill(t *testing.T) {
	t.Parallel()
	ctx := chromiumUser(t)
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	p := &pilot{t: t, ctx: ctx, srv: srv, js: true}
	ws := "/w/" + tn.WorkspaceExternalID()
	p.run(
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(srv.URL+"/login"),
		chromedp.SendKeys(css("signin-email"), tn.Email),
		chromedp.SendKeys(css("signin-password"), tn.Password),
	)
	p.submit(css("signin-submit"), "nav-email")

	p.run(chromedp.Navigate(srv.URL + ws + "/settings/utm-templates"))
	p.run(chromedp.WaitVisible(css("utm-templates-empty")))
	p.look("utm-templates-empty")
	for _, tpl := range []struct{ name, source, medium, campaign, content string }{
		{"Newsletter", "newsletter", "email", "spring-sale", ""},
		{"Print poster", "poster", "print", "", "a4 landscape"},
	} {
		p.run(
			chromedp.SendKeys(css("new-template-name"), tpl.name),
			chromedp.SendKeys(css("new-template-utm-source"), tpl.source),
			chromedp.SendKeys(css("new-template-utm-medium"), tpl.medium),
		)
		if tpl.campaign != "" {
			p.run(chromedp.SendKeys(css("new-template-utm-campaign"), tpl.campaign))
		}
		if tpl.content != "" {
			p.run(chromedp.SendKeys(css("new-template-utm-content"), tpl.content))
		}
		p.submit(css("utm-template-save"), "flash-ok")
	}
	p.run(chromedp.WaitVisible(css("utm-templates-table")))
	p.look("utm-templates")
	p.run(chromedp.EmulateViewport(1280, 900))
	p.submit(css("utm-template-edit"), "utm-template-form")
	p.look("utm-template-edit")
	p.run(chromedp.EmulateViewport(1280, 900))

	// The New link form: choose a template, the fields fill at once.
	p.run(chromedp.Navigate(srv.URL + ws + "/links"))
	p.run(chromedp.WaitVisible(css("new-link-form")), chromedp.Click(css("new-utm-toggle")), chromedp.WaitVisible(css("new-utm-template")))
	if hidden := p.eval(`getComputedStyle(document.querySelector('[data-testid="new-utm-apply"]')).display`); hidden != "none" {
		t.Errorf("Apply is shown with JavaScript (display %s)", hidden)
	}
	p.run(chromedp.SendKeys(css("new-utm-term"), "typed term"))
	p.eval(`(() => { const s = document.querySelector('[data-testid="new-utm-template"]');
		s.value = [...s.options].find(o => o.textContent === "Print poster").value;
		s.dispatchEvent(new Event("change", {bubbles: true})); return "" })()`)
	got := p.eval(`["source","medium","campaign","term","content"].map(n => document.querySelector('[data-testid="new-utm-' + n + '"]').value).join("|")`)
	if got != "poster|print|||a4 landscape" {
		t.Errorf("fields after choosing the template: %q", got)
	}
	p.look("links-new-utm")
	p.run(chromedp.EmulateViewport(1280, 900))

	// Enter in the target field creates the link (back on the list, whose
	// message links to it).
	p.run(chromedp.SendKeys(css("new-target"), "https://example.com/menu?utm_source=typed#top"))
	p.run(
		chromedp.SetAttributeValue(chromedp.CSS("body"), "data-left", "1"),
		chromedp.SendKeys(css("new-target"), kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`body:not([data-left]) [data-testid="flash-link"]`)),
	)
	p.submit(css("flash-link"), "link-page")
	want := "https://example.com/menu?utm_source=poster&utm_medium=print&utm_content=a4+landscape#top"
	if got := p.text("edit-utm-destination"); got != "Visitors arrive at "+want {
		t.Errorf("link page: %q", got)
	}
	p.look("link-utm")
	code := p.eval(`document.querySelector('[data-testid="link-short-url"] code, #link-short-url code').textContent.split("/").pop()`)
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(srv.URL + "/" + code)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); loc != want {
		t.Errorf("redirect to %q, want %q", loc, want)
	}
	linkPage, _ := chromedp.Run(ctx, chromedp.Location())

	for _, path := range []string{ws + "/settings/utm-templates", ws + "/links", strings.TrimPrefix(linkPage, srv.URL)} {
		for _, width := range []int64{1280, 390} {
			t.Run(fmt.Sprintf("axe %s %d", path, width), func(t *testing.T) {
				if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
					t.Fatal(err)
				}
				testkit.AxeCheck(ctx, t, srv.URL+path)
			})
		}
	}
}
