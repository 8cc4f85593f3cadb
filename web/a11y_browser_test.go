package web_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/testkit"
)

// TestBrowserPagesPassAxe runs axe-core's WCAG 2.1 A and AA rules
// (testkit.AxeCheck) on pages in Chromium and fails on any violation: the
// API reference at 1280 and 390 px, the public pages of a short URL that
// does not redirect (404 for an unknown code, 410 for a deleted link), and
// the signed-in Overview (in a time zone, and with an unknown one). Add a
// page by adding a line to pages.
func TestBrowserPagesPassAxe(t *testing.T) {
	t.Parallel()
	ctx := testkit.Chromium(t)
	srv := testkit.StartServer(t)
	admin := testkit.NewTenant(t, srv.Pool)
	token := srv.APIKey(t, admin.WorkspaceID, "links:read", "links:write")
	gone := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/menu"}`), 201)
	resp := srv.Do(t, "DELETE", "/api/v1/links/"+gone["id"].(string), token, "")
	resp.Body.Close()
	if resp.StatusCode != 204 {
		t.Fatalf("delete the link: %d", resp.StatusCode)
	}

	check := func(name, path string, width int64) {
		t.Helper()
		t.Run(fmt.Sprintf("%s-%d", name, width), func(t *testing.T) {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
				t.Fatal(err)
			}
			testkit.AxeCheck(ctx, t, srv.URL+path)
		})
	}
	pages := []struct {
		name, path string
		widths     []int64
	}{
		{"docs", "/docs", []int64{1280, 390}},
		{"short-code-404", "/NoSuchCode9", []int64{1280}},
		{"deleted-link-410", "/" + gone["code"].(string), []int64{1280}},
	}
	for _, p := range pages {
		for _, w := range p.widths {
			check(p.name, p.path, w)
		}
	}

	// Signed in: the Overview with scans (its chart, top links,
	// countries and sources are shown only then).
	kept := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/poster","title":"Poster"}`), 201)
	keptID, ok := id.Parse(id.Link, kept["id"].(string))
	if !ok {
		t.Fatalf("link id %v", kept["id"])
	}
	now := time.Now().UTC()
	addScans(t, srv, admin.WorkspaceID, keptID, now.Add(-time.Hour), 7, "DE", "qr")
	addScans(t, srv, admin.WorkspaceID, keptID, now.Add(-30*time.Hour), 3, "FR", "link")
	foldScans(t, srv, admin.WorkspaceID, 10)
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(srv.URL+"/login"),
		chromedp.SendKeys(css("signin-email"), admin.Email),
		chromedp.SendKeys(css("signin-password"), admin.Password),
		chromedp.Click(css("signin-submit")),
		chromedp.WaitVisible(css("nav-email")),
	); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	check("overview", "/w/"+admin.WorkspaceExternalID()+"/overview", 1280)
	// In a zone off the whole hour, and with an unknown zone said at the
	// picker, on a phone too.
	for _, w := range []int64{1280, 390} {
		check("overview-kolkata", "/w/"+admin.WorkspaceExternalID()+"/overview?timezone=Asia/Kolkata", w)
		check("overview-bad-zone", "/w/"+admin.WorkspaceExternalID()+"/overview?timezone=Mars/Olympus", w)
	}
}
