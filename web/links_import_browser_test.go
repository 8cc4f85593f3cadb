package web_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/testkit"
)

// TestBrowserImportFilterExport walks the many-links features in a real
// browser, each page looked at 390 and 1280 px: upload a CSV with one bad
// row, read the dry run (nothing created yet), create the links, filter
// the list by a tag chip and by two tags, export the filtered list, and
// pause a ticked link with the bulk bar.
func TestBrowserImportFilterExport(t *testing.T) {
	t.Parallel()
	ctx := chromiumUser(t)
	srv := testkit.StartServer(t)
	p := &pilot{t: t, ctx: ctx, srv: srv, js: true}

	p.run(chromedp.Navigate(srv.URL + "/signup"))
	p.run(
		chromedp.SendKeys(css("signup-email"), newEmail("importer")),
		chromedp.SendKeys(css("signup-password"), password),
		chromedp.SendKeys(css("signup-workspace"), "Shops Co"),
	)
	p.submit(css("signup-submit"), "new-link-form")
	p.submit(css("import-csv"), "import-form-page")
	p.look("import-form")

	file := filepath.Join(t.TempDir(), "shops.csv")
	csvText := "target_url,title,code,tags\n" +
		"https://shop.example/berlin,Berlin shop — opening hours and the long address of the shop,,print|Shop\n" +
		"https://shop.example/paris,Paris shop,,print|shop|france\n" +
		"shop.example/oops,Missing scheme,,print\n" +
		"https://shop.example/rome,Rome shop,rome-1,web\n"
	if err := os.WriteFile(file, []byte(csvText), 0o600); err != nil {
		t.Fatal(err)
	}
	p.run(chromedp.SetUploadFiles(css("import-file"), []string{file}))
	p.submit(css("import-upload"), "import-dry-run")
	if got := p.text("count-created"); !strings.Contains(got, "will be created") || !strings.HasSuffix(got, "3") {
		t.Errorf("dry run count: %q", got)
	}
	if got := p.text("count-invalid"); !strings.HasSuffix(got, "1") {
		t.Errorf("dry run invalid: %q", got)
	}
	if first := p.eval(`document.querySelector('[data-testid="import-row"]').innerText`); !strings.Contains(first, "4") || !strings.Contains(first, "target_url: must be an absolute http or https URL") {
		t.Errorf("the bad row is not first: %q", first)
	}
	p.look("import-dry-run")

	p.submit(css("import-start"), "import-result") // the progress page reloads itself into the result
	if got := p.text("import-made"); got != "3 links were created." {
		t.Errorf("result: %q", got)
	}
	if n := p.eval(`String(document.querySelectorAll('[data-testid="import-link"]').length)`); n != "3" {
		t.Errorf("%s links to created links", n)
	}
	p.look("import-result")
	resultURL, _ := chromedp.Run(ctx, chromedp.Location())
	p.submit(css("import-link"), "link-page")
	if n := p.eval(`String(document.querySelectorAll('[data-testid="tag-chip"]').length)`); n == "0" {
		t.Error("no tag chips on the link page")
	}
	p.run(chromedp.SetValue(css("edit-tags"), "print, sh@p"))
	p.submit(css("edit-submit"), "edit-tags-error")
	if got := p.text("edit-tags-error"); !strings.HasPrefix(got, "The tag “sh@p” may contain only") {
		t.Errorf("tags error: %q", got)
	}
	p.look("link-tags-error")
	p.run(chromedp.Navigate(resultURL), chromedp.WaitVisible(css("import-result")))

	p.submit(css("import-to-links"), "links-table")
	if n := p.eval(`String(document.querySelectorAll('[data-testid="link-row"]').length)`); n != "3" {
		t.Fatalf("%s links listed", n)
	}
	p.look("links-with-tags")
	p.submit(chromedp.CSS(`[data-testid="tag-chip"][href$="tag=france"]`), "active-tag")
	if n := p.eval(`String(document.querySelectorAll('[data-testid="link-row"]').length)`); n != "1" {
		t.Errorf("tag france: %s rows", n)
	}
	// A second tag from the select: links with both.
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	p.run(chromedp.Navigate(strings.Split(loc, "?")[0]))
	p.run(chromedp.WaitVisible(css("tag-filter")), chromedp.SetValue(css("tag-filter"), "print"))
	p.submit(css("search-submit"), "active-tag")
	p.run(chromedp.SetValue(css("tag-filter"), "shop"))
	p.submit(css("search-submit"), "active-tag")
	if n := p.eval(`String(document.querySelectorAll('[data-testid="active-tag"]').length)`); n != "2" {
		t.Errorf("%s active tags, want print and shop", n)
	}
	if n := p.eval(`String(document.querySelectorAll('[data-testid="link-row"]').length)`); n != "2" {
		t.Errorf("print AND shop: %s rows, want 2", n)
	}
	p.look("links-two-tags")

	// Export the filtered list: the browser downloads the CSV of exactly these.
	href := p.eval(`document.querySelector('[data-testid="export-csv"]').href`)
	if !strings.Contains(href, "tag=print") || !strings.Contains(href, "tag=shop") {
		t.Errorf("export link %q does not keep the filter", href)
	}
	body, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(async () => { const r = await fetch(document.querySelector('[data-testid="export-csv"]').href); return r.headers.get('content-type') + '\n' + await r.text(); })()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(body, "text/csv") || strings.Count(body, "https://shop.example/") != 2 || !strings.Contains(body, "france|print|shop") {
		t.Errorf("export: %q", body)
	}

	// Bulk: tick one row, pause it.
	p.run(chromedp.Click(chromedp.CSS(`[data-testid="select-link"]`)), chromedp.SetValue(css("bulk-action"), "pause"))
	p.submit(css("bulk-submit"), "flash-ok")
	if got := p.text("flash-ok"); !strings.HasPrefix(got, "Paused 1 link") {
		t.Errorf("bulk pause: %q", got)
	}
	if n := p.eval(`String([...document.querySelectorAll('[data-testid="link-status"]')].filter(e => e.textContent.trim() == "paused").length)`); n != "1" {
		t.Errorf("%s paused rows", n)
	}
	p.look("links-bulk-paused")
	if loc, _ = chromedp.Run(ctx, chromedp.Location()); !regexp.MustCompile(`tag=print&tag=shop`).MatchString(loc) {
		t.Errorf("after the bulk action at %s, want the filtered list", loc)
	}

	// Select all: the header's box ticks every row of the page, and shows
	// a partial selection as such.
	ticked := func() string {
		return p.eval(`String([...document.querySelectorAll('[data-testid="select-link"]')].filter(b => b.checked).length) + "/" + document.querySelector('[data-testid="select-all"]').indeterminate`)
	}
	p.run(chromedp.Click(css("select-all")))
	if got := ticked(); got != "2/false" {
		t.Errorf("after select all: %s ticked, want 2/false", got)
	}
	p.run(chromedp.Click(chromedp.CSS(`[data-testid="select-link"]`)))
	if got := ticked(); got != "1/true" {
		t.Errorf("after unticking one: %s, want 1 ticked and the header partial", got)
	}
}
