package web_test

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// addScans writes n human scans of a link at an instant straight into the
// table (country "" is unknown; source "qr" or "link"); foldScans then
// folds them into the rollups and the overview.
func addScans(t *testing.T, srv *testkit.Server, ws, link uuid.UUID, at time.Time, n int, country, source string) {
	t.Helper()
	var c any
	if country != "" {
		c = country
	}
	if _, err := srv.Pool.Exec(context.Background(), `INSERT INTO scans (id, workspace_id, link_id, occurred_at, device, os, browser, bot, visitor_hash, country, source)
		SELECT gen_random_uuid(), $1, $2, $3, 'mobile', 'iOS', 'Safari', false, '\x00', $4, $5 FROM generate_series(1, $6)`,
		ws, link, at, c, source, n); err != nil {
		t.Fatal(err)
	}
}

// foldScans folds until the workspace's overview holds want human scans
// (the server's own folder may hold the fold lock for a moment).
func foldScans(t *testing.T, srv *testkit.Server, ws uuid.UUID, want int64) {
	t.Helper()
	ctx := context.Background()
	wait.Until(t, 15*time.Second, func() (bool, string) {
		if _, err := srv.App.Folder.Fold(ctx); err != nil {
			t.Fatal(err)
		}
		var got int64
		if err := srv.Pool.QueryRow(ctx, `SELECT COALESCE(sum(scans), 0) FROM scan_workspace_days WHERE workspace_id = $1 AND dim = 's'`, ws).Scan(&got); err != nil {
			t.Fatal(err)
		}
		return got == want, fmt.Sprintf("folded %d scans of the workspace, want %d", got, want)
	})
}

// linkIDOf is the link id of a link page's path.
func linkIDOf(t *testing.T, p string) uuid.UUID {
	t.Helper()
	linkID, ok := id.Parse(id.Link, p[strings.LastIndex(p, "/")+1:])
	if !ok {
		t.Fatalf("no link id in %q", p)
	}
	return linkID
}

// rowsOf returns the elements with this data-testid and their inner HTML
// up to the element's end (li or tr or div), for looking into lists.
func rowsOf(body, testID, tag string) []string {
	re := regexp.MustCompile(`(?s)<` + tag + `[^>]*data-testid="` + regexp.QuoteMeta(testID) + `"[^>]*>.*?</` + tag + `>`)
	return re.FindAllString(body, -1)
}

// countryRowRE reads a country row's code ("" for unknown) and scans.
var countryRowRE = regexp.MustCompile(`data-code="([A-Z]*)" data-scans="(\d+)"`)

// TestLinkPageCountriesAndSources: the link page lists every country of
// the range with its flag, name and code (unknown as "Unknown" with a
// neutral marker), ten at first and the rest under "All N countries", and
// splits the scans into QR code scans and link clicks.
func TestLinkPageCountriesAndSources(t *testing.T) {
	t.Parallel()
	srv, tn, b, _ := signedIn(t)
	p := createInForm(t, b, tn.WorkspaceExternalID(), url.Values{"target_url": {"https://example.com/geo"}, "title": {"Geo"}})
	id := linkIDOf(t, p)
	at := time.Now().UTC().Add(-time.Hour)
	// Germany 20 by QR code, unknown 5 by link, and twelve more countries
	// 1 each by link: 14 countries, 37 scans (20 QR, 17 link).
	addScans(t, srv, tn.WorkspaceID, id, at, 20, "DE", "qr")
	addScans(t, srv, tn.WorkspaceID, id, at, 5, "", "link")
	others := []string{"FR", "IT", "ES", "PT", "NL", "BE", "AT", "CH", "PL", "SE", "NO", "DK"}
	for _, c := range others {
		addScans(t, srv, tn.WorkspaceID, id, at, 1, c, "link")
	}
	foldScans(t, srv, tn.WorkspaceID, 37)

	page := b.get(p + "?range=7d")
	if page.status != 200 {
		t.Fatalf("link page: %d", page.status)
	}
	if got := textOf(t, page.body, "total-scans"); got != "37" {
		t.Errorf("total %s, want 37", got)
	}
	rows := rowsOf(page.body, "country-row", "li")
	if len(rows) != 14 {
		t.Fatalf("%d country rows, want 14", len(rows))
	}
	if !strings.Contains(rows[0], "🇩🇪") || !strings.Contains(rows[0], ">Germany<") || !strings.Contains(rows[0], ">DE<") || !strings.Contains(rows[0], `data-scans="20"`) || !strings.Contains(rows[0], "54%") {
		t.Errorf("first country row: %s", rows[0])
	}
	if !strings.Contains(rows[1], `data-code=""`) || !strings.Contains(rows[1], ">Unknown<") || !strings.Contains(rows[1], `class="flag unknown"`) || !strings.Contains(rows[1], `data-scans="5"`) {
		t.Errorf("second country row (unknown): %s", rows[1])
	}
	var sum int
	for _, r := range rows {
		var n int
		fmt.Sscan(countryRowRE.FindStringSubmatch(r)[2], &n)
		sum += n
	}
	if sum != 37 {
		t.Errorf("the countries add up to %d, want 37", sum)
	}
	// Ten shown, four behind "All 14 countries".
	more := page.body[strings.Index(page.body, `data-testid="countries-more"`):]
	if !strings.Contains(more, "All 14 countries") || strings.Count(more[:strings.Index(more, "</details>")], `data-testid="country-row"`) != 4 {
		t.Errorf("the countries beyond ten: %s", excerpt(more))
	}
	qr, link := rowsOf(page.body, "source-qr", "div"), rowsOf(page.body, "source-link", "div")
	if len(qr) != 1 || len(link) != 1 || !strings.Contains(qr[0], "QR code scans") || !strings.Contains(qr[0], "<strong>20</strong>") || !strings.Contains(qr[0], "54%") ||
		!strings.Contains(link[0], "Link clicks") || !strings.Contains(link[0], "<strong>17</strong>") || !strings.Contains(link[0], "46%") {
		t.Errorf("sources: %q %q", qr, link)
	}
}

// TestOverviewPage: the overview of a workspace totals every link's
// scans of the range, ranks the top links (named, linked, a deleted one
// neither), lists countries and the QR/link split, and shows nothing of
// another workspace; the range picker takes 7d/30d/90d and says so when
// given anything else.
func TestOverviewPage(t *testing.T) {
	t.Parallel()
	srv, tn, b, ws := signedIn(t)
	other := testkit.NewTenant(t, srv.Pool)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	yesterday := today.Add(-12 * time.Hour)
	menu := createInForm(t, b, ws, url.Values{"target_url": {"https://example.com/menu"}, "title": {"Spring menu"}})
	poster := createInForm(t, b, ws, url.Values{"target_url": {"https://example.com/poster"}, "code": {"poster-1"}})
	gone := createInForm(t, b, ws, url.Values{"target_url": {"https://example.com/gone"}, "title": {"Old flyer"}})
	addScans(t, srv, tn.WorkspaceID, linkIDOf(t, menu), yesterday, 12, "DE", "qr")
	addScans(t, srv, tn.WorkspaceID, linkIDOf(t, menu), today.AddDate(0, 0, -20), 3, "FR", "link")
	addScans(t, srv, tn.WorkspaceID, linkIDOf(t, poster), yesterday, 7, "", "link")
	addScans(t, srv, tn.WorkspaceID, linkIDOf(t, gone), yesterday, 5, "DE", "link")
	addScans(t, srv, tn.WorkspaceID, linkIDOf(t, menu), today.AddDate(0, 0, -60), 100, "US", "qr") // only in 90 days
	// Another workspace, scanned the same day from Japan.
	secret := testkit.Link(t, srv.Pool, &testkit.LinkOpts{WorkspaceID: other.WorkspaceID, Code: "secret-co"})
	if _, err := srv.Pool.Exec(context.Background(), `UPDATE links SET title = 'Secret campaign' WHERE id = $1`, secret); err != nil {
		t.Fatal(err)
	}
	addScans(t, srv, other.WorkspaceID, secret, yesterday, 50, "JP", "qr")
	foldScans(t, srv, tn.WorkspaceID, 127)
	foldScans(t, srv, other.WorkspaceID, 50)
	if p := b.post(gone+"/delete", url.Values{}); p.status != 303 {
		t.Fatalf("delete: %d", p.status)
	}

	page := b.get("/w/" + ws + "/overview")
	if page.status != 200 {
		t.Fatalf("overview: %d %s", page.status, excerpt(page.body))
	}
	if !strings.Contains(page.body, `data-testid="nav-overview"`) || !strings.Contains(page.body, `<option value="30d" selected>`) {
		t.Error("no Overview in the top bar, or 30 days is not the default")
	}
	if got := textOf(t, page.body, "overview-total"); got != "27" {
		t.Errorf("total %s, want 27 (12 + 3 + 7 + 5)", got)
	}
	if got := textOf(t, page.body, "overview-as-of"); !strings.HasSuffix(got, "UTC") {
		t.Errorf("as of %q", got)
	}
	if n := strings.Count(page.body, `data-testid="chart-bar"`); n != 30 {
		t.Errorf("%d chart bars, want 30", n)
	}
	top := rowsOf(page.body, "top-link", "tr")
	if len(top) != 3 {
		t.Fatalf("%d top links, want 3", len(top))
	}
	for i, want := range []struct{ name, href, scans string }{
		{"Spring menu", menu, "15"}, {"poster-1", poster, "7"}, {"(deleted link)", "", "5"},
	} {
		r := top[i]
		if !strings.Contains(r, ">"+want.name+"<") || !strings.Contains(r, `data-testid="top-link-scans">`+want.scans+"<") {
			t.Errorf("top link %d: %s, want %s with %s", i+1, r, want.name, want.scans)
		}
		if want.href != "" && !strings.Contains(r, `href="`+want.href+`"`) {
			t.Errorf("top link %d does not lead to %s: %s", i+1, want.href, r)
		}
		if want.href == "" && (strings.Contains(r, "<a ") || strings.Contains(r, "Old flyer")) {
			t.Errorf("the deleted link is linked or named: %s", r)
		}
	}
	if !strings.Contains(top[1], srv.URL+"/poster-1") && !strings.Contains(top[1], "/poster-1</code>") {
		t.Errorf("no short URL in %s", top[1])
	}
	countries := map[string]string{}
	for _, m := range countryRowRE.FindAllStringSubmatch(page.body, -1) {
		countries[m[1]] = m[2]
	}
	if fmt.Sprint(countries) != "map[:7 DE:17 FR:3]" {
		t.Errorf("countries %v", countries)
	}
	if !strings.Contains(page.body, "🇩🇪") || !strings.Contains(page.body, ">Germany<") {
		t.Error("Germany is not shown with its flag")
	}
	if qr := rowsOf(page.body, "source-qr", "div"); len(qr) != 1 || !strings.Contains(qr[0], "<strong>12</strong>") || !strings.Contains(qr[0], "44%") {
		t.Errorf("QR code scans: %q", qr)
	}
	if link := rowsOf(page.body, "source-link", "div"); len(link) != 1 || !strings.Contains(link[0], "<strong>15</strong>") || !strings.Contains(link[0], "56%") {
		t.Errorf("link clicks: %q", link)
	}
	for _, leak := range []string{"Secret campaign", "secret-co", "Japan", "🇯🇵"} {
		if strings.Contains(page.body, leak) {
			t.Errorf("the overview shows %q of another workspace", leak)
		}
	}

	// 7 days: only yesterday's; 90 days: the US scans too.
	if p := b.get("/w/" + ws + "/overview?range=7d"); textOf(t, p.body, "overview-total") != "24" || strings.Count(p.body, `data-testid="chart-bar"`) != 7 {
		t.Errorf("7 days: total %s", textOf(t, p.body, "overview-total"))
	}
	if p := b.get("/w/" + ws + "/overview?range=90d"); textOf(t, p.body, "overview-total") != "127" || !strings.Contains(p.body, "United States") {
		t.Errorf("90 days: total %s", textOf(t, p.body, "overview-total"))
	}
	// Anything else: said, and the default shown.
	p := b.get("/w/" + ws + "/overview?range=1y")
	if p.status != 200 || !hasTestID(p.body, "range-error-range") || textOf(t, p.body, "overview-total") != "27" {
		t.Errorf("range=1y: %d %s", p.status, excerpt(p.body))
	}
	// The other workspace's own overview has its scans only; a stranger
	// gets 404.
	o := newBrowser(t, srv)
	o.mustSignIn(other.Email, other.Password)
	if p := o.get("/w/" + other.WorkspaceExternalID() + "/overview"); textOf(t, p.body, "overview-total") != "50" || strings.Contains(p.body, "Spring menu") {
		t.Errorf("the other workspace's overview: %s", excerpt(p.body))
	}
	if p := o.get("/w/" + ws + "/overview"); p.status == 200 {
		t.Errorf("another workspace's overview: %d", p.status)
	}
	// An empty workspace: the empty state.
	e := newBrowser(t, srv)
	empty := testkit.NewTenant(t, srv.Pool)
	e.mustSignIn(empty.Email, empty.Password)
	if p := e.get("/w/" + empty.WorkspaceExternalID() + "/overview"); !hasTestID(p.body, "overview-empty") || textOf(t, p.body, "overview-total") != "0" {
		t.Errorf("an empty workspace's overview: %s", excerpt(p.body))
	}
}

// TestOverviewPageInATimeZone: the overview's days are the chosen zone's
// (?timezone=, a plain GET form with the range; the workspace's zone
// first, as "Workspace default (…)"): scans at 18:20 and 18:40 UTC are one
// UTC day but two days in Kolkata (+5:30), whose days start at 18:30 UTC.
// An unknown zone is said at the field, quoting it, and the workspace's
// zone used; the workspace's own zone is the default.
func TestOverviewPageInATimeZone(t *testing.T) {
	t.Parallel()
	srv, tn, b, ws := signedIn(t)
	other := testkit.NewTenant(t, srv.Pool)
	menu := createInForm(t, b, ws, url.Values{"target_url": {"https://example.com/menu"}, "title": {"Spring menu"}})
	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -3) // a UTC day well inside the last 7 of every zone
	addScans(t, srv, tn.WorkspaceID, linkIDOf(t, menu), day.Add(18*time.Hour+20*time.Minute), 5, "DE", "qr")
	addScans(t, srv, tn.WorkspaceID, linkIDOf(t, menu), day.Add(18*time.Hour+40*time.Minute), 3, "IN", "link")
	// Another workspace, scanned at the same instants.
	secret := testkit.Link(t, srv.Pool, &testkit.LinkOpts{WorkspaceID: other.WorkspaceID, Code: "secret-tz"})
	addScans(t, srv, other.WorkspaceID, secret, day.Add(18*time.Hour+40*time.Minute), 50, "JP", "qr")
	foldScans(t, srv, tn.WorkspaceID, 8)
	foldScans(t, srv, other.WorkspaceID, 50)

	// bars reads the page's chart: each bar's start (UTC) and scans.
	bars := func(body string) map[string]string {
		out := map[string]string{}
		for _, m := range regexp.MustCompile(`data-start="([^"]+)" data-scans="(\d+)"`).FindAllStringSubmatch(body, -1) {
			if m[2] != "0" {
				out[m[1]] = m[2]
			}
		}
		return out
	}
	base := "/w/" + ws + "/overview?range=7d"
	utc := b.get(base)
	if utc.status != 200 || fmt.Sprint(bars(utc.body)) != fmt.Sprintf("map[%s:8]", day.Format(time.RFC3339)) {
		t.Errorf("in UTC: %d, bars %v", utc.status, bars(utc.body))
	}
	// The picker: a GET form of the range and the zone, the workspace's
	// zone first and chosen, then the common zones; a button to send it
	// without JavaScript.
	form := utc.body[strings.Index(utc.body, `data-testid="overview-range"`):]
	form = form[:strings.Index(form, "</form>")]
	for _, want := range []string{`<select id="overview-timezone" name="timezone"`, `<option value="" selected>Workspace default (UTC)</option>`,
		`<option value="Asia/Kolkata">Asia/Kolkata</option>`, `<option value="Asia/Kathmandu">`, `<label for="overview-timezone">Time zone</label>`,
		`type="submit"`, `name="range"`} {
		if !strings.Contains(form, want) {
			t.Errorf("the picker has no %s: %s", want, form)
		}
	}
	if !strings.Contains(strings.ToLower(utc.body), `method="get"`) {
		t.Error("the picker is not a GET form")
	}

	kolkata := b.get(base + "&timezone=Asia/Kolkata")
	loc, _ := time.LoadLocation("Asia/Kolkata")
	localDay := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, loc) // starts 18:30 UTC the day before
	want := fmt.Sprintf("map[%s:5 %s:3]", localDay.UTC().Format(time.RFC3339), localDay.AddDate(0, 0, 1).UTC().Format(time.RFC3339))
	if kolkata.status != 200 || fmt.Sprint(bars(kolkata.body)) != want {
		t.Errorf("in Kolkata: %d, bars %v, want %s", kolkata.status, bars(kolkata.body), want)
	}
	if got := textOf(t, kolkata.body, "overview-total"); got != "8" {
		t.Errorf("in Kolkata: total %s", got)
	}
	if !strings.Contains(kolkata.body, `<option value="Asia/Kolkata" selected>`) || !strings.Contains(kolkata.body, `<option value="7d" selected>`) ||
		!strings.Contains(kolkata.body, "(days in Asia/Kolkata)") {
		t.Errorf("the page does not say Kolkata and 7 days: %s", excerpt(kolkata.body))
	}
	for _, leak := range []string{"secret-tz", "Japan", ">50<"} {
		if strings.Contains(kolkata.body, leak) {
			t.Errorf("the overview shows %q of another workspace", leak)
		}
	}

	// An unknown zone: said at the field, quoting it; UTC shown.
	bad := b.get(base + "&timezone=Mars%2FOlympus")
	if bad.status != 200 || !hasTestID(bad.body, "range-error-timezone") || !strings.Contains(bad.body, "“Mars/Olympus” is not a time zone") ||
		!strings.Contains(bad.body, `aria-describedby="overview-timezone-error"`) || !strings.Contains(bad.body, `aria-invalid="true"`) ||
		fmt.Sprint(bars(bad.body)) != fmt.Sprintf("map[%s:8]", day.Format(time.RFC3339)) || !strings.Contains(bad.body, `<option value="" selected>`) {
		t.Errorf("timezone=Mars/Olympus: %d %s", bad.status, excerpt(bad.body))
	}

	// The workspace's own zone is the default.
	key := srv.APIKey(t, tn.WorkspaceID)
	testkit.JSON(t, srv.Do(t, "PATCH", "/api/v1/workspace", key, `{"timezone":"Asia/Kathmandu"}`), 200)
	def := b.get(base)
	// Kathmandu's (+5:45) day after starts at 18:15 UTC: both scans are in it.
	ktm := day.Add(18*time.Hour + 15*time.Minute).Format(time.RFC3339)
	if !strings.Contains(def.body, `<option value="" selected>Workspace default (Asia/Kathmandu)</option>`) || !strings.Contains(def.body, "(days in Asia/Kathmandu)") ||
		fmt.Sprint(bars(def.body)) != "map["+ktm+":8]" {
		t.Errorf("the workspace's zone by default: bars %v, %s", bars(def.body), excerpt(def.body))
	}
	if p := b.get(base + "&timezone=UTC"); fmt.Sprint(bars(p.body)) != fmt.Sprintf("map[%s:8]", day.Format(time.RFC3339)) {
		t.Errorf("UTC asked in a Kathmandu workspace: bars %v", bars(p.body))
	}
}
