package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/testkit"
)

// insertScan writes one scan row directly, so the data set is exactly known.
func insertScan(t *testing.T, f *linksFixture, linkID uuid.UUID, at, device, os, browser string, referrer *string, bot bool, visitor byte) {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		t.Fatal(err)
	}
	o := &testkit.ScanOpts{WorkspaceID: f.tenant.WorkspaceID, LinkID: linkID, At: ts, Device: device, OS: os, Browser: browser, Bot: bot, Visitor: visitor}
	if referrer != nil {
		o.ReferrerHost = *referrer
	}
	testkit.Scan(t, f.srv.Pool, o)
}

func str(s string) *string { return &s }

func TestAnalyticsOnAKnownDataSet(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	l := f.create(t, `{"target_url":"https://example.com"}`)
	linkID, _ := id.Parse(id.Link, l["id"].(string))
	news := str("news.example")
	insertScan(t, f, linkID, "2026-11-01T23:59:59.999Z", "mobile", "iOS", "Safari", nil, false, 1)  // before from
	insertScan(t, f, linkID, "2026-11-02T00:00:00Z", "mobile", "iOS", "Safari", news, false, 1)     // first instant: in
	insertScan(t, f, linkID, "2026-11-02T23:59:59.999Z", "mobile", "iOS", "Safari", news, false, 1) // same visitor
	insertScan(t, f, linkID, "2026-11-02T12:00:00Z", "desktop", "Windows", "Edge", nil, false, 2)
	insertScan(t, f, linkID, "2026-11-04T08:30:00Z", "tablet", "Android", "Chrome", news, false, 3)
	insertScan(t, f, linkID, "2026-11-03T10:00:00Z", "bot", "Other", "Googlebot", nil, true, 9) // bots apart
	insertScan(t, f, linkID, "2026-11-05T00:00:00Z", "mobile", "iOS", "Safari", nil, false, 4)  // to is exclusive

	base := "/api/v1/links/" + l["id"].(string) + "/analytics"
	rep := testkit.JSON(t, f.srv.Do(t, "GET", base+"?from=2026-11-02T00:00:00Z&to=2026-11-05T00:00:00Z", f.token, ""), 200)
	for k, want := range map[string]any{"object": "analytics", "link_id": l["id"], "from": "2026-11-02T00:00:00Z", "to": "2026-11-05T00:00:00Z",
		"interval": "day", "total": float64(4), "unique": float64(3), "bots": float64(1)} {
		if rep[k] != want {
			t.Errorf("%s = %v, want %v", k, rep[k], want)
		}
	}
	if got := series(rep); got != "2026-11-02T00:00:00Z:3/2 2026-11-03T00:00:00Z:0/0 2026-11-04T00:00:00Z:1/1" {
		t.Errorf("series %s", got)
	}
	if got := keys(rep["devices"]); got != "mobile:2 desktop:1 tablet:1" {
		t.Errorf("devices %s", got)
	}
	if got := keys(rep["referrers"]); got != "news.example:3 (direct):1" {
		t.Errorf("referrers %s", got)
	}
	if got := keys(rep["browsers"]); got != "Safari:2 Chrome:1 Edge:1" {
		t.Errorf("browsers %s", got)
	}

	// Weeks start on Monday: a range from a Wednesday starts its first bucket on the Monday before.
	rep = testkit.JSON(t, f.srv.Do(t, "GET", base+"?from=2026-11-04T00:00:00Z&to=2026-11-18T00:00:00Z&interval=week", f.token, ""), 200)
	if got := series(rep); got != "2026-11-02T00:00:00Z:2/2 2026-11-09T00:00:00Z:0/0 2026-11-16T00:00:00Z:0/0" {
		t.Errorf("weekly series %s", got)
	}
	rep = testkit.JSON(t, f.srv.Do(t, "GET", base+"?from=2026-11-02T06:00:00%2B06:00&to=2026-11-02T03:00:00Z&interval=hour", f.token, ""), 200)
	if got := series(rep); got != "2026-11-02T00:00:00Z:1/1 2026-11-02T01:00:00Z:0/0 2026-11-02T02:00:00Z:0/0" {
		t.Errorf("hourly series %s (from given with an offset)", got)
	}
	rep = testkit.JSON(t, f.srv.Do(t, "GET", base+"?from=2026-09-15T00:00:00Z&to=2026-12-01T00:00:00Z&interval=month", f.token, ""), 200)
	// Visitor 1 scanned on 11-01 and 11-02: once per day, so twice in the month.
	if got := series(rep); got != "2026-09-01T00:00:00Z:0/0 2026-10-01T00:00:00Z:0/0 2026-11-01T00:00:00Z:6/5" {
		t.Errorf("monthly series %s", got)
	}
	// Defaults: the last 30 days by day, every bucket present.
	rep = testkit.JSON(t, f.srv.Do(t, "GET", base, f.token, ""), 200)
	if n := len(rep["series"].([]any)); rep["interval"] != "day" || n < 30 || n > 31 {
		t.Errorf("default: interval %v, %d buckets", rep["interval"], n)
	}
}

func series(rep map[string]any) string {
	var parts []string
	for _, b := range rep["series"].([]any) {
		m := b.(map[string]any)
		parts = append(parts, fmt.Sprintf("%s:%v/%v", m["start"], m["scans"], m["unique"]))
	}
	return strings.Join(parts, " ")
}

func keys(v any) string {
	var parts []string
	for _, b := range v.([]any) {
		m := b.(map[string]any)
		parts = append(parts, fmt.Sprintf("%s:%v", m["key"], m["scans"]))
	}
	return strings.Join(parts, " ")
}

func TestAnalytics422And404(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	l := f.create(t, `{"target_url":"https://example.com"}`)
	base := "/api/v1/links/" + l["id"].(string) + "/analytics"
	for q, ptr := range map[string]string{
		"?interval=year":           "/query/interval",
		"?from=yesterday":          "/query/from",
		"?to=2026-13-01T00:00:00Z": "/query/to",
		"?from=2026-11-02T00:00:00Z&to=2026-11-02T00:00:00Z":               "/query/from",
		"?from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z&interval=hour": "/query/from",
		"?from=2020-01-01T00:00:00Z&to=2026-03-01T00:00:00Z":               "/query/from",
		"?window=7d": "/query/window",
	} {
		p := testkit.Problem(t, f.srv.Do(t, "GET", base+q, f.token, ""), 422, "validation-failed")
		if got := p["errors"].([]any)[0].(map[string]any)["pointer"]; got != ptr {
			t.Errorf("%s: pointer %v, want %s", q, got, ptr)
		}
	}
	theirs := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links", f.otherTk, `{"target_url":"https://example.com"}`), 201)
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links/"+theirs["id"].(string)+"/analytics", f.token, ""), 404, "not-found")
	linksOnly := f.srv.APIKey(t, f.tenant.WorkspaceID, "links:read", "links:write")
	testkit.Problem(t, f.srv.Do(t, "GET", base, linksOnly, ""), 403, "insufficient-scope")
}

// TestAnalyticsBusyIs503WithRetryAfter holds a lock that analytics reads
// must wait for: the reports that got a slot run into the statement
// timeout (503 `unavailable`, Retry-After 5), the third finds the
// workspace's share of the analytics budget taken (429 `rate-limited`,
// Retry-After 1), none hangs; once the lock is gone, the same request is
// answered.
func TestAnalyticsBusyIs503WithRetryAfter(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	l := f.create(t, `{"target_url":"https://example.com"}`)
	path := "/api/v1/links/" + l["id"].(string) + "/analytics?from=2026-11-02T00:00:00Z&to=2026-11-05T00:00:00Z"

	ctx := context.Background()
	tx, err := f.srv.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "LOCK TABLE scan_rollups IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	const n = 3 // more than a workspace may run at once
	type answer struct {
		status           int
		retryAfter, body string
	}
	answers := make(chan answer, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequest("GET", f.srv.URL+path, nil)
			req.Header.Set("Authorization", "Bearer "+f.token)
			resp, err := f.srv.Client(t).Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			answers <- answer{resp.StatusCode, resp.Header.Get("Retry-After"), string(body)}
		})
	}
	wg.Wait()
	close(answers)
	var timedOut, refused int
	for a := range answers {
		// The two that ran time out (503); the third found the workspace's
		// two slots taken: its share of the analytics budget (429).
		switch {
		case a.status == 503 && strings.Contains(a.body, "/problems/unavailable") && a.retryAfter == "5" && strings.Contains(a.body, "took too long"):
			timedOut++
		case a.status == 429 && strings.Contains(a.body, "/problems/rate-limited") && a.retryAfter == "1" && strings.Contains(a.body, "retry shortly"):
			refused++
		default:
			t.Errorf("a report blocked by a lock: %d, Retry-After %q: %s", a.status, a.retryAfter, a.body)
		}
	}
	if timedOut == 0 || refused == 0 || timedOut+refused != n {
		t.Errorf("%d timed out and %d found no slot; want both, %d in all", timedOut, refused, n)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.JSON(t, f.srv.Do(t, "GET", path, f.token, ""), 200)
}

// Analytics in a time zone: the parameter, the workspace's default, the
// echo, and 422 for an unknown zone.
func TestAnalyticsInATimeZone(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	l := f.create(t, `{"target_url":"https://example.com"}`)
	linkID, _ := id.Parse(id.Link, l["id"].(string))
	// 22:30 in New York on 2 November is 03:30 UTC on the 3rd.
	insertScan(t, f, linkID, "2026-11-03T03:30:00Z", "mobile", "iOS", "Safari", nil, false, 1)
	insertScan(t, f, linkID, "2026-11-03T12:00:00Z", "mobile", "iOS", "Safari", nil, false, 2)
	base := "/api/v1/links/" + l["id"].(string) + "/analytics?from=2026-11-02T05:00:00Z&to=2026-11-04T05:00:00Z"

	utc := testkit.JSON(t, f.srv.Do(t, "GET", base, f.token, ""), 200)
	if utc["timezone"] != "UTC" || series(utc) != "2026-11-02T00:00:00Z:0/0 2026-11-03T00:00:00Z:2/2 2026-11-04T00:00:00Z:0/0" {
		t.Errorf("UTC: %v %s", utc["timezone"], series(utc))
	}
	ny := testkit.JSON(t, f.srv.Do(t, "GET", base+"&timezone=America/New_York", f.token, ""), 200)
	// Days start at New York's midnights, given as UTC instants.
	if ny["timezone"] != "America/New_York" || ny["from"] != "2026-11-02T05:00:00Z" ||
		series(ny) != "2026-11-02T05:00:00Z:1/1 2026-11-03T05:00:00Z:1/1" {
		t.Errorf("New York: %v from %v, %s", ny["timezone"], ny["from"], series(ny))
	}
	p := testkit.Problem(t, f.srv.Do(t, "GET", base+"&timezone=Mars/Olympus", f.token, ""), 422, "validation-failed")
	if !strings.Contains(fmt.Sprint(p["errors"]), "/query/timezone") {
		t.Errorf("unknown zone: %v", p["errors"])
	}

	// The workspace's zone is the default.
	ws := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/workspace", f.token, ""), 200)
	if ws["timezone"] != "UTC" {
		t.Errorf("a new workspace's zone: %v", ws["timezone"])
	}
	p = testkit.Problem(t, f.srv.Do(t, "PATCH", "/api/v1/workspace", f.token, `{"timezone":"Eastern"}`), 422, "validation-failed")
	if !strings.Contains(fmt.Sprint(p["errors"]), "/timezone") {
		t.Errorf("unknown zone: %v", p["errors"])
	}
	ws = testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/workspace", f.token, `{"timezone":"America/New_York"}`), 200)
	if ws["timezone"] != "America/New_York" {
		t.Errorf("after PATCH: %v", ws["timezone"])
	}
	def := testkit.JSON(t, f.srv.Do(t, "GET", base, f.token, ""), 200)
	if def["timezone"] != "America/New_York" || series(def) != series(ny) {
		t.Errorf("the workspace's default: %v %s", def["timezone"], series(def))
	}
	if other := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/workspace", f.otherTk, ""), 200); other["timezone"] != "UTC" {
		t.Errorf("another workspace's zone: %v", other["timezone"])
	}
}
