package web_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// linkIDRE finds the link id in a link page's address.
var linkIDRE = regexp.MustCompile(`/links/(lnk_[0-9a-z]+)$`)

// flashLinkRE finds the link of a flash message ("Link created: <a>…").
var flashLinkRE = regexp.MustCompile(`<a href="([^"]+)" data-testid="flash-link">([^<]*)</a>`)

// createInForm posts the New link form and returns the new link's page
// path; it fails the test unless the post goes back to the links list
// whose "Link created" message links to that page.
func createInForm(t *testing.T, b *browser, ws string, form url.Values) string {
	t.Helper()
	p := b.post("/w/"+ws+"/links", form)
	if p.status != http.StatusSeeOther || p.location != "/w/"+ws+"/links" {
		t.Fatalf("create %v: %d %q %s", form, p.status, p.location, excerpt(p.body))
	}
	list := b.follow(p) // shows (and so clears) the "Link created" message
	m := flashLinkRE.FindStringSubmatch(list.body)
	if list.status != http.StatusOK || m == nil || !linkIDRE.MatchString(m[1]) || !strings.Contains(list.body, "Link created:") {
		t.Fatalf("create %v: the links list has no message linking to the new link: %d %s", form, list.status, excerpt(list.body))
	}
	return m[1]
}

// eventsOf returns the workspace's events, oldest first, as type and data.
func eventsOf(t *testing.T, srv *testkit.Server, tn testkit.Tenant) []map[string]any {
	t.Helper()
	rows, err := srv.Pool.Query(context.Background(), "SELECT type, data FROM events WHERE workspace_id = $1 ORDER BY id", tn.WorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []map[string]any
	for rows.Next() {
		var typ string
		var data []byte
		if err := rows.Scan(&typ, &data); err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		_ = json.Unmarshal(data, &m)
		m["_type"] = typ
		out = append(out, m)
	}
	return out
}

func TestLinkFormCreate422And409(t *testing.T) {
	t.Parallel()
	srv, tn, b, ws := signedIn(t)
	cases := []struct {
		form   url.Values
		status int
		field  string // data-testid of the error
		msg    string
	}{
		{url.Values{"target_url": {""}}, 422, "new-target-error", "The target URL must be an absolute http or https URL."},
		{url.Values{"target_url": {"https://u:p@example.com"}}, 422, "new-target-error", "The target URL must not contain a user name or password."},
		{url.Values{"target_url": {"https://example.com"}, "code": {"docs"}}, 422, "new-code-error", `The code "docs" is reserved by linkqr; choose another code.`},
		{url.Values{"target_url": {"https://example.com"}, "code": {"a b"}}, 422, "new-code-error", "The code must be 3 to 64 characters of A-Z, a-z, 0-9, _ and -."},
		{url.Values{"target_url": {"https://example.com"}, "expires_at": {"2020-01-01T10:00"}}, 422, "new-expires-error", "The expiry must be in the future."},
		{url.Values{"target_url": {"https://example.com"}, "expires_at": {"tomorrow"}}, 422, "new-expires-error", "The expiry must be a date and time such as 2026-12-31T18:00 (UTC)."},
		{url.Values{"target_url": {"https://example.com"}, "title": {strings.Repeat("é", 201)}}, 422, "new-title-error", "The title must be at most 200 characters long."},
		{url.Values{"target_url": {"https://example.com"}, "tags": {"spring, sale!"}}, 422, "new-tags-error", "The tag “sale!” may contain only letters, digits, spaces, '-', '_' and '.' (not '!')."},
	}
	for _, c := range cases {
		p := b.post("/w/"+ws+"/links", c.form)
		if p.status != c.status || textOf(t, p.body, c.field) != c.msg {
			t.Errorf("%v: %d, %q; want %d %q", c.form, p.status, textOf(t, p.body, c.field), c.status, c.msg)
		}
		// The form keeps what was typed.
		if v := c.form.Get("target_url"); v != "" && !strings.Contains(p.body, `value="`+strings.ReplaceAll(v, "&", "&amp;")+`"`) {
			t.Errorf("%v: the target was not kept", c.form)
		}
	}
	if ev := eventsOf(t, srv, tn); len(ev) != 0 {
		t.Fatalf("refused forms recorded events: %v", ev)
	}

	path := createInForm(t, b, ws, url.Values{"target_url": {"https://example.com/a"}, "code": {"spring-26"}, "title": {"Spring"}, "expires_at": {"2099-01-02T03:04"}, "tags": {"Spring, sale,spring"}})
	page := b.get(path)
	if page.status != 200 || textOf(t, page.body, "link-name") != "Spring" || !strings.Contains(page.body, `value="2099-01-02T03:04"`) {
		t.Fatalf("link page: %d %s", page.status, excerpt(page.body))
	}
	ev := eventsOf(t, srv, tn)
	if len(ev) != 1 || ev[0]["_type"] != "link.created" || ev[0]["link"].(map[string]any)["expires_at"] != "2099-01-02T03:04:00Z" ||
		fmt.Sprint(ev[0]["link"].(map[string]any)["tags"]) != "[sale spring]" {
		t.Fatalf("events after creating: %v", ev)
	}
	// Taken (also across workspaces): 409 with the message at the code.
	other := testkit.NewTenant(t, srv.Pool)
	ob := newBrowser(t, srv)
	ob.mustSignIn(other.Email, other.Password)
	p := ob.post("/w/"+other.WorkspaceExternalID()+"/links", url.Values{"target_url": {"https://example.com"}, "code": {"spring-26"}})
	if p.status != http.StatusConflict || !strings.HasPrefix(textOf(t, p.body, "new-code-error"), "The code is already taken") {
		t.Errorf("taken code: %d %s", p.status, excerpt(p.body))
	}
}

func TestLinkPageEditPauseDelete(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	admin, member := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	addMember(t, srv, admin, member, account.RoleMember)
	// A member manages links like an admin.
	b := newBrowser(t, srv)
	b.mustSignIn(member.Email, member.Password)
	ws := admin.WorkspaceExternalID()
	path := createInForm(t, b, ws, url.Values{"target_url": {"https://example.com/old"}, "title": {"Menu"}})

	// Nothing changed: no event.
	p := b.post(path, url.Values{"target_url": {"https://example.com/old"}, "title": {"Menu"}, "expires_at": {""}})
	if p.status != http.StatusSeeOther || textOf(t, b.follow(p).body, "flash-ok") != "Nothing changed." {
		t.Fatalf("unchanged save: %d", p.status)
	}
	// Re-point and retitle: one link.updated with exactly those two fields.
	p = b.post(path, url.Values{"target_url": {"https://example.com/new"}, "title": {""}, "expires_at": {""}})
	page := b.follow(p)
	if !strings.Contains(page.body, "now redirects to https://example.com/new") || !strings.Contains(textOf(t, page.body, "previous-target"), "") {
		t.Errorf("after re-pointing: %s", excerpt(page.body))
	}
	if !strings.Contains(page.body, `data-testid="previous-target"`) || !strings.Contains(page.body, "https://example.com/old") {
		t.Errorf("the previous target is not shown")
	}
	ev := eventsOf(t, srv, admin)
	last := ev[len(ev)-1]
	prev, _ := json.Marshal(last["previous_attributes"])
	if len(ev) != 2 || last["_type"] != "link.updated" || string(prev) != `{"target_url":"https://example.com/old","title":"Menu"}` {
		t.Fatalf("events %d, last %v %s", len(ev), last["_type"], prev)
	}
	// A bad edit changes nothing and says why, at the field.
	p = b.post(path, url.Values{"target_url": {"javascript:alert(1)"}, "title": {"x"}, "expires_at": {"2001-01-01T00:00"}})
	if p.status != 422 || textOf(t, p.body, "edit-target-error") != "The target URL must be an absolute http or https URL." ||
		textOf(t, p.body, "edit-expires-error") != "The expiry must be in the future." {
		t.Errorf("bad edit: %d %s", p.status, excerpt(p.body))
	}
	if n := len(eventsOf(t, srv, admin)); n != 2 {
		t.Errorf("a refused edit recorded an event (%d)", n)
	}
	// An expired link can still be retitled: its expiry, left as shown, is not sent again.
	if _, err := srv.Pool.Exec(context.Background(), "UPDATE links SET expires_at = '2026-01-01T10:00:00Z' WHERE workspace_id = $1", admin.WorkspaceID); err != nil {
		t.Fatal(err)
	}
	// A write behind the product's back reaches its cache of links through the
	// row trigger's notification, which is asynchronous: the person sees the
	// page with the expiry before submitting it.
	wait.For(t, 10*time.Second, func() bool { return hasTestID(b.get(path).body, "expired-notice") }, "the link page showing the expiry written in SQL")
	p = b.post(path, url.Values{"target_url": {"https://example.com/new"}, "title": {"Again"}, "expires_at": {"2026-01-01T10:00"}})
	if p.status != http.StatusSeeOther {
		t.Errorf("retitling an expired link: %d %s", p.status, excerpt(p.body))
	}
	// Pause and resume.
	// Pausing asks first (a dialog with JavaScript, this page without):
	// nothing is paused until it is confirmed.
	p = b.post(path+"/status", url.Values{"status": {"paused"}})
	if p.status != http.StatusOK || !hasTestID(p.body, "confirm-page") || hasTestID(b.get(path).body, "paused-notice") {
		t.Errorf("unconfirmed pause: %d, or the link was paused", p.status)
	}
	p = b.post(path+"/status", url.Values{"status": {"paused"}, "confirmed": {"yes"}})
	if p.status != http.StatusSeeOther || !hasTestID(b.follow(p).body, "paused-notice") {
		t.Errorf("pause: %d", p.status)
	}
	if p := b.post(path+"/status", url.Values{"status": {"gone"}}); p.status != 422 {
		t.Errorf("unknown status: %d", p.status)
	}
	b.post(path+"/status", url.Values{"status": {"active"}})
	ev = eventsOf(t, srv, admin)
	if st := ev[len(ev)-1]["previous_attributes"].(map[string]any)["status"]; st != "paused" {
		t.Errorf("resume's previous status %v", st)
	}
	// Delete: a confirmation page first (GET changes nothing).
	confirm := b.get(path + "/delete")
	if confirm.status != 200 || !strings.Contains(confirm.body, "can never be used again") {
		t.Fatalf("confirmation: %d", confirm.status)
	}
	p = b.post(path+"/delete", nil)
	if p.status != http.StatusSeeOther || !strings.HasSuffix(p.location, "/links") {
		t.Fatalf("delete: %d %q", p.status, p.location)
	}
	if got := b.get(path); got.status != 404 {
		t.Errorf("deleted link's page: %d", got.status)
	}
	if ev := eventsOf(t, srv, admin); ev[len(ev)-1]["_type"] != "link.deleted" {
		t.Errorf("last event %v", ev[len(ev)-1]["_type"])
	}
}

func TestLinkPagesOfAnotherWorkspaceAre404(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn, other := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	ob := newBrowser(t, srv)
	ob.mustSignIn(other.Email, other.Password)
	theirs := linkIDRE.FindStringSubmatch(createInForm(t, ob, other.WorkspaceExternalID(), url.Values{"target_url": {"https://other.example"}}))[1]
	b := newBrowser(t, srv)
	b.mustSignIn(tn.Email, tn.Password)
	ws := "/w/" + tn.WorkspaceExternalID() + "/links/"
	for _, id := range []string{theirs, "lnk_nope", "nope"} {
		for _, path := range []string{"", "/delete", "/analytics.csv", "/scans.csv", "/qr.png"} {
			if p := b.get(ws + id + path); p.status != 404 {
				t.Errorf("GET %s%s: %d", id, path, p.status)
			}
		}
		for _, path := range []string{"", "/status", "/delete"} {
			if p := b.post(ws+id+path, url.Values{"target_url": {"https://evil.example"}, "status": {"paused"}}); p.status != 404 {
				t.Errorf("POST %s%s: %d", id, path, p.status)
			}
		}
	}
	// Their own workspace's pages are not reachable either.
	if p := b.get("/w/" + other.WorkspaceExternalID() + "/links/" + theirs); p.status != 404 {
		t.Errorf("other workspace's link page: %d", p.status)
	}
	if ev := eventsOf(t, srv, other); len(ev) != 1 {
		t.Errorf("the other workspace has %d events, want only its link.created", len(ev))
	}
}

func TestLinksSearchFilterAndCount(t *testing.T) {
	t.Parallel()
	_, _, b, ws := signedIn(t)
	createInForm(t, b, ws, url.Values{"target_url": {"https://shop.example/summer"}, "title": {"Summer sale"}})
	createInForm(t, b, ws, url.Values{"target_url": {"https://menu.example/"}, "title": {"Lunch 50% off"}, "code": {"lunch_menu"}})
	paused := createInForm(t, b, ws, url.Values{"target_url": {"https://menu.example/dinner"}, "title": {"Dinner"}})
	b.post(paused+"/status", url.Values{"status": {"paused"}, "confirmed": {"yes"}})
	base := "/w/" + ws + "/links"
	rows := func(p page) int { return strings.Count(p.body, `data-testid="link-row"`) }
	for q, want := range map[string]struct {
		rows  int
		total string
	}{
		"":                      {3, "3 links"},
		"?q=SUMMER":             {1, "1 link matches"}, // title, any case
		"?q=lunch_m":            {1, "1 link matches"}, // code; _ is not a wildcard
		"?q=menu.example":       {2, "2 links match"},  // target
		"?q=50%25":              {1, "1 link matches"}, // % is literal
		"?q=l_nch":              {0, ""},               // _ is literal too
		"?status=paused":        {1, "1 link matches"}, // filter
		"?q=menu&status=active": {1, "1 link matches"},
	} {
		p := b.get(base + q)
		if p.status != 200 || rows(p) != want.rows || (want.total != "" && !strings.HasPrefix(textOf(t, p.body, "links-total"), want.total)) {
			t.Errorf("%s: %d, %d rows, total %q; want %d rows, %q", q, p.status, rows(p), textOf(t, p.body, "links-total"), want.rows, want.total)
		}
	}
	if p := b.get(base + "?q=l_nch"); !hasTestID(p.body, "links-none-found") {
		t.Error("no empty state for a search without results")
	}
	if p := b.get(base + "?status=bogus"); p.status != 200 || !strings.Contains(textOf(t, p.body, "search-error"), "The status must be one of all, active, paused, expired.") || rows(p) != 3 {
		t.Errorf("bad status filter: %d", p.status)
	}
	if p := b.get(base + "?before=garbage"); p.status != 404 {
		t.Errorf("bad cursor: %d", p.status)
	}
}

// TestLinksSearchAt10000 fills a workspace with 10,000 links and checks
// that a search finds the right ones, pages keep the search, and that the
// planner answers a search from the trigram index.
func TestLinksSearchAt10000(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	ctx := context.Background()
	// Ids in creation order, like the UUIDv7 ids the service makes.
	_, err := srv.Pool.Exec(ctx, `
		INSERT INTO links (id, workspace_id, code, target_url, title)
		SELECT (lpad(to_hex(i), 8, '0') || '-0000-7000-8000-' || substr(md5(random()::text), 1, 12))::uuid, $1,
		       'c' || i || '-' || substr(md5(random()::text), 1, 6), 'https://example.com/p/' || i, 'Poster ' || i
		FROM generate_series(1, 10000) AS i`, tn.WorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Pool.Exec(ctx, "ANALYZE links"); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, srv)
	b.mustSignIn(tn.Email, tn.Password)
	base := "/w/" + tn.WorkspaceExternalID() + "/links"
	p := b.get(base)
	if textOf(t, p.body, "links-total") != "10000 links" || strings.Count(p.body, `data-testid="link-row"`) != 50 {
		t.Fatalf("first page: total %q, %d rows", textOf(t, p.body, "links-total"), strings.Count(p.body, `data-testid="link-row"`))
	}
	// "p/777" is in the targets of 777 and 7770–7779: 11 links.
	p = b.get(base + "?q=p/777")
	if textOf(t, p.body, "links-total") != "11 links match" || strings.Count(p.body, `data-testid="link-row"`) != 11 {
		t.Errorf("search: total %q, %d rows", textOf(t, p.body, "links-total"), strings.Count(p.body, `data-testid="link-row"`))
	}
	// "Poster 1" matches 1, 10–19, 100–199, 1000–1999, 10000: 1112 links;
	// the next page keeps the search.
	p = b.get(base + "?q=poster+1")
	older := regexp.MustCompile(`href="(/w/[^"]+/links\?[^"]+)" data-testid="older-links"`).FindStringSubmatch(p.body)
	if textOf(t, p.body, "links-total") != "1112 links match" || older == nil || !strings.Contains(older[1], "q=poster+1") {
		t.Fatalf("paged search: %q, older %v", textOf(t, p.body, "links-total"), older)
	}
	next := b.get(htmlUnescape(older[1]))
	if next.status != 200 || strings.Count(next.body, `data-testid="link-row"`) != 50 || !strings.Contains(next.body, "Poster 1") {
		t.Errorf("second page of the search: %d", next.status)
	}
	// At 10,000 rows the planner may still prefer reading the workspace's
	// rows; what must hold is that the search's expression is the index's,
	// so the index answers as soon as scanning costs more.
	tx, err := srv.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off"); err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	rows, err := tx.Query(ctx, `EXPLAIN SELECT * FROM links WHERE workspace_id = $1 AND deleted_at IS NULL
		AND (coalesce(title, '') || ' ' || code || ' ' || target_url) ILIKE '%p/777%' ORDER BY id DESC LIMIT 51`, tn.WorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		_ = rows.Scan(&line)
		plan.WriteString(line + "\n")
	}
	rows.Close()
	if !strings.Contains(plan.String(), "links_search_idx") {
		t.Errorf("the search does not use the trigram index:\n%s", plan.String())
	}
}

func TestLinkExportsCSV(t *testing.T) {
	t.Parallel()
	srv, tn, b, _ := signedIn(t)
	path := createInForm(t, b, tn.WorkspaceExternalID(), url.Values{"target_url": {"https://example.com"}, "code": {"csv-link"}})
	// Three scans today, straight into the table (the recorder is tested elsewhere).
	now := time.Now().UTC()
	for i, ref := range []string{"=cmd.example", "news.example", ""} {
		var r any = ref
		if ref == "" {
			r = nil
		}
		// The oldest from a QR code in Germany; the others of unknown country, by link.
		country, source := any(nil), "link"
		if i == 2 {
			country, source = "DE", "qr"
		}
		if _, err := srv.Pool.Exec(context.Background(), `INSERT INTO scans (id, workspace_id, link_id, occurred_at, referrer_host, device, os, browser, bot, visitor_hash, country, source)
			SELECT gen_random_uuid(), workspace_id, id, $1, $2, 'desktop', 'Linux', 'Chrome', $3, '\x00', $4, $5 FROM links WHERE code = 'csv-link'`,
			now.Add(-time.Duration(i)*time.Minute), r, i == 2, country, source); err != nil {
			t.Fatal(err)
		}
	}
	series := b.get(path + "/analytics.csv?range=7d")
	if series.status != 200 || series.header.Get("Content-Type") != "text/csv; charset=utf-8" || !strings.HasPrefix(series.header.Get("Content-Disposition"), `attachment; filename="csv-link-series-`) {
		t.Fatalf("series: %d %v", series.status, series.header)
	}
	recs, err := csv.NewReader(strings.NewReader(series.body)).ReadAll()
	if err != nil || len(recs) != 8 || strings.Join(recs[0], ",") != "bucket_start,interval,timezone,scans,unique" {
		t.Fatalf("series CSV (%v): %q", err, series.body)
	}
	scans := b.get(path + "/scans.csv?range=24h")
	recs, err = csv.NewReader(strings.NewReader(scans.body)).ReadAll()
	if err != nil || scans.status != 200 || len(recs) != 4 || strings.Join(recs[0], ",") != "id,occurred_at,referrer_host,device,os,browser,bot,country,source,variant" {
		t.Fatalf("scans CSV (%v): %d %q", err, scans.status, scans.body)
	}
	// Oldest first; a value that looks like a formula is defused.
	if recs[1][6] != "true" || recs[3][2] != "'=cmd.example" || !strings.HasPrefix(recs[1][0], "scn_") ||
		recs[1][7] != "DE" || recs[1][8] != "qr" || recs[3][7] != "" || recs[3][8] != "link" {
		t.Errorf("rows %q", recs[1:])
	}
	if p := b.get(path + "/scans.csv?range=custom&from=2026-02-01&to=2026-01-01"); p.status != 422 {
		t.Errorf("reversed custom range: %d", p.status)
	}
	if p := b.get(path + "/scans.csv?range=90d&interval=hour"); p.status != 422 || !strings.Contains(p.body, "at most 31 days") {
		t.Errorf("90 days by hour: %d %s", p.status, excerpt(p.body))
	}
}

func TestLinkPageRangeAndQRDesignerErrors(t *testing.T) {
	t.Parallel()
	_, tn, b, _ := signedIn(t)
	path := createInForm(t, b, tn.WorkspaceExternalID(), url.Values{"target_url": {"https://example.com"}})
	// A contrast below 3:1: the rule, the measured value, no preview and no downloads.
	p := b.get(path + "?fg=777777&bg=888888&ecc=H")
	if p.status != 200 || !hasTestID(p.body, "qr-invalid") || hasTestID(p.body, "qr-download-png") ||
		!strings.Contains(textOf(t, p.body, "qr-fg-error"), "at least 3:1 is needed") || !strings.Contains(p.body, "Contrast 1.2") {
		t.Errorf("low contrast: %d %s", p.status, excerpt(p.body))
	}
	p = b.get(path + "?size=10&margin=99")
	if !strings.Contains(textOf(t, p.body, "qr-size-error"), "from 64 to 4096") || !strings.Contains(textOf(t, p.body, "qr-margin-error"), "from 0 to 16") {
		t.Errorf("size and margin errors missing")
	}
	// The designer's options reach the image URLs, and the range picker keeps them.
	p = b.get(path + "?fg=000080&ecc=Q&size=1024&range=30d")
	if !strings.Contains(p.body, "qr.png?bg=ffffff&amp;ecc=Q&amp;fg=000080&amp;frame=&amp;margin=4&amp;modules=square&amp;size=1024&amp;download=1") ||
		!strings.Contains(p.body, `<input type="hidden" name="fg" value="000080">`) || !strings.Contains(p.body, `<input type="hidden" name="range" value="30d">`) {
		t.Errorf("designer state not kept: %s", excerpt(p.body))
	}
	// A custom range and an impossible interval: messages at the picker, the page still renders.
	p = b.get(path + "?range=custom&from=2026-11-01&to=nope")
	if p.status != 200 || textOf(t, p.body, "range-error-to") != "Choose an end day." || !hasTestID(p.body, "totals") {
		t.Errorf("bad custom range: %d", p.status)
	}
	// Both days included; a link without scans there gets the empty state.
	p = b.get(path + "?range=custom&from=2026-11-01&to=2026-11-02")
	if p.status != 200 || hasTestID(p.body, "range-error-to") || !strings.Contains(p.body, "1 Nov 2026, 00:00 UTC – 3 Nov 2026, 00:00 UTC") || !hasTestID(p.body, "analytics-empty") {
		t.Errorf("custom range: %d %s", p.status, excerpt(p.body))
	}
}

// TestLinkFormSentTwiceCreatesOneLink: the New link form carries a
// one-time key; posting it again (a double click, a resubmitted page) gets
// the first answer and creates nothing, like an Idempotency-Key in the API.
func TestLinkFormSentTwiceCreatesOneLink(t *testing.T) {
	t.Parallel()
	srv, tn, b, _ := signedIn(t)
	base := "/w/" + tn.WorkspaceExternalID() + "/links"
	m := regexp.MustCompile(`name="form_key" value="([^"]+)"`).FindStringSubmatch(b.get(base).body)
	if m == nil {
		t.Fatal("the New link form has no one-time key")
	}
	form := url.Values{"form_key": {m[1]}, "target_url": {"https://example.com/once"}}
	first := b.post(base, form)
	again := b.post(base, form)
	if first.status != http.StatusSeeOther || again.status != http.StatusSeeOther || again.location != first.location || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("first %d %q, again %d %q %v", first.status, first.location, again.status, again.location, again.header)
	}
	if ev := eventsOf(t, srv, tn); len(ev) != 1 {
		t.Errorf("%d events, want one link.created", len(ev))
	}
	form.Set("target_url", "https://example.com/other")
	if p := b.post(base, form); p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "Form already used") {
		t.Errorf("reused key with other values: %d", p.status)
	}
	// Another workspace's use of the same key is its own.
	other := testkit.NewTenant(t, srv.Pool)
	ob := newBrowser(t, srv)
	ob.mustSignIn(other.Email, other.Password)
	if p := ob.post("/w/"+other.WorkspaceExternalID()+"/links", url.Values{"form_key": {m[1]}, "target_url": {"https://example.com/once"}}); p.status != http.StatusSeeOther || p.location == first.location {
		t.Errorf("the same key in another workspace: %d %q", p.status, p.location)
	}
	if n := strings.Count(b.get(base).body, `data-testid="link-row"`); n != 1 {
		t.Errorf("%d links, want 1", n)
	}
}

// TestLinkCreatedStaysOnTheList: creating a link goes back to the links
// list, whose message names the new link (its title, else its code) and
// links to its page; the new link is in the list.
func TestLinkCreatedStaysOnTheList(t *testing.T) {
	t.Parallel()
	_, _, b, ws := signedIn(t)
	for _, c := range []struct {
		form url.Values
		name string
	}{
		{url.Values{"target_url": {"https://example.com/menu"}, "title": {"Spring menu"}}, "Spring menu"},
		{url.Values{"target_url": {"https://example.com/x"}, "code": {"flyer-7"}}, "flyer-7"},
	} {
		p := b.post("/w/"+ws+"/links", c.form)
		if p.status != http.StatusSeeOther || p.location != "/w/"+ws+"/links" {
			t.Fatalf("create: %d %q", p.status, p.location)
		}
		list := b.follow(p)
		m := flashLinkRE.FindStringSubmatch(list.body)
		if m == nil || m[2] != c.name || !linkIDRE.MatchString(m[1]) {
			t.Fatalf("the message's link: %v in %s", m, excerpt(list.body))
		}
		short := regexp.MustCompile(`</a> — (\S+) now redirects to ` + regexp.QuoteMeta(c.form.Get("target_url")) + `\.`).FindStringSubmatch(list.body)
		if short == nil || !strings.HasPrefix(short[1], "http") {
			t.Errorf("the message after the link: %s", excerpt(list.body))
		}
		if strings.Count(list.body, `href="`+m[1]+`"`) < 2 || !hasTestID(list.body, "new-link-form") { // the message's link and the row's
			t.Errorf("the list does not show the new link and the form")
		}
		if page := b.get(m[1]); page.status != http.StatusOK || textOf(t, page.body, "link-name") != c.name {
			t.Errorf("the message's link leads to %d %s", page.status, excerpt(page.body))
		}
	}
}
