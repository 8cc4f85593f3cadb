package api_test

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
)

// eventIDs returns the ids and types of a page of events.
func eventIDs(page map[string]any) (ids, types []string) {
	for _, e := range page["data"].([]any) {
		ev := e.(map[string]any)
		ids = append(ids, ev["id"].(string))
		types = append(types, ev["type"].(string))
	}
	return ids, types
}

// TestEventsListPaging: GET /events lists the workspace's events newest
// first in cursor pages, filters by types, and leaves out ping.
func TestEventsListPaging(t *testing.T) {
	t.Parallel()
	f := newHooksFixture(t)
	var links []string
	for range 3 {
		links = append(links, f.create(t, `{"target_url":"https://example.com/p"}`)["id"].(string))
	}
	testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/links/"+links[0], f.token, `{"title":"Changed"}`), 200)
	hook := f.createHook(t, `{"url":"`+publicHook+`","events":["link.created"]}`)
	testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/webhooks/"+hook["id"].(string)+"/test", f.token, ""), 202)

	var all, types []string
	path := "/api/v1/events?limit=3"
	for pages := 0; ; pages++ {
		page := testkit.JSON(t, f.srv.Do(t, "GET", path, f.token, ""), 200)
		ids, ts := eventIDs(page)
		all, types = append(all, ids...), append(types, ts...)
		if page["has_more"] != true {
			if page["next_cursor"] != nil || pages != 1 {
				t.Fatalf("last page %v after %d pages", page, pages)
			}
			break
		}
		path = "/api/v1/events?limit=3&cursor=" + url.QueryEscape(page["next_cursor"].(string))
	}
	if want := []string{"link.updated", "link.created", "link.created", "link.created"}; !slices.Equal(types, want) {
		t.Fatalf("types %v, want %v (no ping)", types, want)
	}
	if !slices.IsSortedFunc(all, func(a, b string) int { return -compareIDs(a, b) }) {
		t.Errorf("not newest first: %v", all)
	}
	page := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/events?types=link.updated,scan.created", f.token, ""), 200)
	if ids, ts := eventIDs(page); len(ids) != 1 || ts[0] != "link.updated" || ids[0] != all[0] {
		t.Errorf("types filter: %v %v", ids, ts)
	}
}

func compareIDs(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestEventsReadForward: after=evt_… lists the later events oldest first
// (next_cursor null), continuing with after=<last id>; wait answers as soon
// as an event arrives, and with an empty page when none does.
func TestEventsReadForward(t *testing.T) {
	t.Parallel()
	f := newHooksFixture(t)
	for range 4 {
		f.create(t, `{"target_url":"https://example.com/f"}`)
	}
	newest := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/events", f.token, ""), 200)
	all, _ := eventIDs(newest)
	slices.Reverse(all) // oldest first

	// The events settle for 2 s before forward reading returns them; wait
	// answers as soon as the first has, so poll until all three have.
	testkit.Eventually(t, 30*time.Second, func() bool {
		ids, _ := eventIDs(testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/events?wait=5&after="+all[0], f.token, ""), 200))
		return len(ids) == 3
	}, "the three later events to settle")
	page := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/events?limit=2&after="+all[0], f.token, ""), 200)
	got, _ := eventIDs(page)
	if !slices.Equal(got, all[1:3]) || page["has_more"] != true || page["next_cursor"] != got[1] {
		t.Fatalf("forward page %v, want %v with has_more, next_cursor the last", page, all[1:3])
	}
	page = testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/events?limit=2&after="+got[1], f.token, ""), 200)
	if rest, _ := eventIDs(page); !slices.Equal(rest, all[3:]) || page["has_more"] != false || page["next_cursor"] != all[3] {
		t.Fatalf("second forward page %v, want %v", page, all[3:])
	}
	empty := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/events?wait=1&after="+all[3], f.token, ""), 200)
	if len(empty["data"].([]any)) != 0 || empty["has_more"] != false || empty["next_cursor"] != all[3] {
		t.Errorf("nothing new: %v", empty)
	}

	// A long poll of 25 s answers once a link is created, long before then.
	type answer struct {
		resp *http.Response
	}
	done := make(chan answer, 1)
	go func() {
		done <- answer{f.srv.Do(t, "GET", "/api/v1/events?wait=25&types=link.created&after="+all[3], f.token, "")}
	}()
	created := f.create(t, `{"target_url":"https://example.com/new"}`)
	select {
	case a := <-done:
		page := testkit.JSON(t, a.resp, 200)
		data := page["data"].([]any)
		if len(data) != 1 || data[0].(map[string]any)["data"].(map[string]any)["link"].(map[string]any)["id"] != created["id"] {
			t.Fatalf("long poll answered %v", page)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the 25 s long poll did not answer within 20 s of the event")
	}
}

// TestEventsIsolationAndScope: another workspace's events never show,
// whatever the position; the list needs webhooks:read.
func TestEventsIsolationAndScope(t *testing.T) {
	t.Parallel()
	f := newHooksFixture(t)
	f.create(t, `{"target_url":"https://example.com/mine"}`)
	mine := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/events", f.token, ""), 200)
	ids, _ := eventIDs(mine)
	if len(ids) != 1 {
		t.Fatalf("events %v", mine)
	}
	theirs := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/events", f.otherTk, ""), 200)
	if len(theirs["data"].([]any)) != 0 {
		t.Errorf("the other workspace sees %v", theirs)
	}
	before := "evt_00000000000000000000000000"
	if fwd := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/events?wait=3&after="+before, f.otherTk, ""), 200); len(fwd["data"].([]any)) != 0 {
		t.Errorf("the other workspace reads forward %v", fwd)
	}

	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/events", f.srv.APIKey(t, f.tenant.WorkspaceID, "links:read", "webhooks:write"), ""), 403, "insufficient-scope")
	testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/events", f.srv.APIKey(t, f.tenant.WorkspaceID, "webhooks:read"), ""), 200)
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/events", "", ""), 401, "unauthorized")
}

// TestEventsRefusesBadQueries: every malformed parameter is a precise 422
// (a bad cursor a 400).
func TestEventsRefusesBadQueries(t *testing.T) {
	t.Parallel()
	f := newHooksFixture(t)
	id := "evt_06gzzsq08t3bj5s5kz2h1x9q4c"
	for q, pointer := range map[string]string{
		"types=link.created,nope":              "/query/types",
		"types=":                               "/query/types",
		"types=ping":                           "/query/types",
		"wait=26":                              "/query/wait",
		"wait=-1":                              "/query/wait",
		"wait=01":                              "/query/wait",
		"after=lnk_06gzzspxy9ry5b4nj0v9yx7aq0": "/query/after",
		"after=" + id + "&cursor=AZrP_vBXdN2MaQkXLQ2mQA": "/query/after",
		"wait=5&cursor=AZrP_vBXdN2MaQkXLQ2mQA":           "/query/wait",
		"limit=101":                                      "/query/limit",
		"after=" + id + "&after=" + id:                   "/query/after",
	} {
		p := testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/events?"+q, f.token, ""), 422, "validation-failed")
		errs, _ := p["errors"].([]any)
		if len(errs) != 1 || errs[0].(map[string]any)["pointer"] != pointer {
			t.Errorf("%s: errors %v, want one at %s", q, errs, pointer)
		}
	}
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/events?cursor=nope", f.token, ""), 400, "invalid-request")
}

// TestEventsFiftyWaitersShareThePool: 50 long polls at once on a server
// whose pool has 8 connections hold none between their checks: a link
// created meanwhile (which needs a connection) is created at once, and
// every poll answers with its event rather than an empty page at the end
// of its wait.
func TestEventsFiftyWaitersShareThePool(t *testing.T) {
	t.Parallel()
	f := newHooksFixture(t)
	f.create(t, `{"target_url":"https://example.com/start"}`)
	ids, _ := eventIDs(testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/events?limit=1", f.token, ""), 200))
	const waiters = 50
	type answer struct {
		status int
		body   []byte
		err    error
	}
	answers := make(chan answer, waiters)
	for range waiters {
		go func() {
			req, _ := http.NewRequest("GET", f.srv.URL+"/api/v1/events?wait=25&after="+ids[0], nil)
			req.Header.Set("Authorization", "Bearer "+f.token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answers <- answer{err: err}
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			answers <- answer{resp.StatusCode, b, err}
		}()
	}
	created := f.create(t, `{"target_url":"https://example.com/during"}`)
	for range waiters {
		a := <-answers
		if a.err != nil || a.status != 200 || !strings.Contains(string(a.body), created["id"].(string)) {
			t.Fatalf("a long poll answered %d %v %.300s", a.status, a.err, a.body)
		}
	}
}

// TestEventsTypeFilterReadsABoundedWindow: a type filter examines at most
// 1,000 events per page, so a rare type among many others answers a page
// with has_more and the next_cursor to continue from (forward: the `after`
// of the next request) rather than reading them all.
func TestEventsTypeFilterReadsABoundedWindow(t *testing.T) {
	t.Parallel()
	f := newHooksFixture(t)
	id := f.create(t, `{"target_url":"https://example.com/rare"}`)["id"].(string)
	testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/links/"+id, f.token, `{"title":"the rare event"}`), 200)
	items := make([]string, 1000)
	for i := range items {
		items[i] = `{"target_url":"https://example.com/many"}`
	}
	testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links/bulk", f.token, `{"links":[`+strings.Join(items, ",")+`]}`), 200)

	// Newest first: the window of the 1,000 newest holds no link.updated.
	page := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/events?types=link.updated", f.token, ""), 200)
	if len(page["data"].([]any)) != 0 || page["has_more"] != true || page["next_cursor"] == nil {
		t.Fatalf("first filtered page %.300v", page)
	}
	page = testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/events?types=link.updated&cursor="+url.QueryEscape(page["next_cursor"].(string)), f.token, ""), 200)
	if _, ts := eventIDs(page); len(ts) != 1 || page["has_more"] != false {
		t.Fatalf("second filtered page %.300v", page)
	}

	// Forward from the start, types=link.created: the first window holds
	// the first event (link.created) and the link.updated; once every
	// event has settled, following next_cursor reads all 1,001 in windows.
	newest, _ := eventIDs(testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/events?limit=2", f.token, ""), 200))
	testkit.Eventually(t, 30*time.Second, func() bool {
		ids, _ := eventIDs(testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/events?after="+newest[1], f.token, ""), 200))
		return len(ids) == 1 && ids[0] == newest[0]
	}, "the newest event, and so every one, to settle")
	after, created, pages := "evt_00000000000000000000000000", 0, 0
	for ; pages < 20; pages++ {
		p := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/events?limit=100&types=link.created&after="+after, f.token, ""), 200)
		ids, _ := eventIDs(p)
		created += len(ids)
		after = p["next_cursor"].(string)
		if p["has_more"] != true {
			break
		}
	}
	if created != 1001 {
		t.Errorf("read %d link.created forward in %d pages, want 1001", created, pages+1)
	}
	fwd := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/events?types=link.updated&after=evt_00000000000000000000000000", f.token, ""), 200)
	if _, ts := eventIDs(fwd); len(ts) != 1 || ts[0] != "link.updated" {
		t.Errorf("forward link.updated: %.300v", fwd)
	}
}
