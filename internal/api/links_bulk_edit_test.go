package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/linkqr/linkqr/internal/testkit"
)

// wantStatus checks an answer's status and closes it.
func wantStatus(t *testing.T, resp *http.Response, want int) {
	t.Helper()
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != want {
		t.Errorf("%s %s: status %d, want %d", resp.Request.Method, resp.Request.URL, resp.StatusCode, want)
	}
}

// tagsOf is a link's tags as the API shows them.
func (f *linksFixture) tagsOf(t *testing.T, linkID string) []string {
	t.Helper()
	l := f.get(t, f.token, linkID)
	var out []string
	for _, v := range l["tags"].([]any) {
		out = append(out, v.(string))
	}
	return out
}

// TestBulkEditConcurrentTagsAllLand: nine bulk edits at once, each adding
// its own tag to the same link (and one other link each), leave all nine
// tags — the tags are added by the database on the locked row, not
// computed from a read and written back whole.
func TestBulkEditConcurrentTagsAllLand(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	shared := f.create(t, `{"target_url":"https://example.com/shared","tags":["keep"]}`)["id"].(string)
	var own []string
	for i := range 9 {
		own = append(own, f.create(t, fmt.Sprintf(`{"target_url":"https://example.com/own/%d"}`, i))["id"].(string))
	}
	var wg sync.WaitGroup
	statuses := make([]int, 9)
	for i := range 9 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Half name the shared link first, half last: rows are
			// locked in id order, so neither order deadlocks.
			ids := []string{shared, own[i]}
			if i%2 == 1 {
				ids = []string{own[i], shared}
			}
			body := fmt.Sprintf(`{"ids":["%s","%s"],"add_tags":["t%d"]}`, ids[0], ids[1], i)
			resp := f.srv.Do(t, "PATCH", "/api/v1/links/bulk", f.token, body)
			statuses[i] = resp.StatusCode
			_ = resp.Body.Close()
		}()
	}
	wg.Wait()
	for i, s := range statuses {
		if s != http.StatusOK {
			t.Errorf("edit %d: status %d", i, s)
		}
	}
	want := []string{"keep", "t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8"}
	if got := f.tagsOf(t, shared); !slices.Equal(got, want) {
		t.Errorf("shared link's tags = %v, want %v", got, want)
	}
	if n := f.count(t, "SELECT count(*) FROM events WHERE workspace_id = $1 AND type = 'link.updated'", f.tenant.WorkspaceID); n != 18 {
		t.Errorf("%d link.updated events, want 18 (one per changed link per edit)", n)
	}
	if n := f.count(t, "SELECT count(*) FROM link_tags lt JOIN links l ON l.id = lt.link_id WHERE l.workspace_id = $1 AND lt.tag = 't4'", f.tenant.WorkspaceID); n != 2 {
		t.Errorf("tag t4 indexed on %d links, want 2", n)
	}
}

// TestBulkEditPerItem: each id on its own — another workspace's link, a
// deleted one and a malformed id fail alone; a link the change leaves as
// it was writes nothing; previous_attributes say what changed.
func TestBulkEditPerItem(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	a := f.create(t, `{"target_url":"https://example.com/a","tags":["old","print"]}`)["id"].(string)
	b := f.create(t, `{"target_url":"https://example.com/b","tags":["new"]}`)["id"].(string)
	testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/links/"+b, f.token, `{"status":"paused"}`), 200)
	gone := f.create(t, `{"target_url":"https://example.com/gone"}`)["id"].(string)
	wantStatus(t, f.srv.Do(t, "DELETE", "/api/v1/links/"+gone, f.token, ""), 204)
	theirs := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links", f.otherTk, `{"target_url":"https://example.com/theirs","tags":["x"]}`), 201)["id"].(string)
	before := f.count(t, "SELECT count(*) FROM events WHERE workspace_id = $1", f.tenant.WorkspaceID)

	body := fmt.Sprintf(`{"ids":["%s","%s","%s","%s","lnk_nope"],"add_tags":["New"],"remove_tags":["old"],"status":"paused"}`, a, b, gone, theirs)
	got := testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/links/bulk", f.token, body), 200)
	if got["object"] != "list" {
		t.Fatalf("object = %v", got["object"])
	}
	data := got["data"].([]any)
	want := []int{200, 200, 404, 404, 422}
	for i, d := range data {
		item := d.(map[string]any)
		if int(item["index"].(float64)) != i || int(item["status"].(float64)) != want[i] {
			t.Errorf("item %d: %v", i, item)
		}
	}
	la := data[0].(map[string]any)["link"].(map[string]any)
	if fmt.Sprint(la["tags"]) != "[new print]" || la["status"] != "paused" {
		t.Errorf("a after the edit: tags %v status %v", la["tags"], la["status"])
	}
	if p := data[4].(map[string]any)["error"].(map[string]any); !strings.Contains(fmt.Sprint(p["errors"]), "/ids/4") {
		t.Errorf("malformed id's problem: %v", p)
	}
	// Only a changed: b already had "new", no "old" and was paused.
	evs := f.events(t)
	if n := len(evs) - before; n != 1 {
		t.Fatalf("%d new events, want 1", n)
	}
	prev := evs[len(evs)-1]["previous_attributes"].(map[string]any)
	if fmt.Sprint(prev["tags"]) != "[old print]" || prev["status"] != "active" {
		t.Errorf("previous_attributes = %v", prev)
	}
	// The other workspace's link is untouched.
	if l := f.get(t, f.otherTk, theirs); fmt.Sprint(l["tags"]) != "[x]" || l["status"] != "active" {
		t.Errorf("another workspace's link changed: %v", l)
	}
}

// TestBulkEditAtomic: one failure rejects all, naming it; nothing changes.
func TestBulkEditAtomic(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	a := f.create(t, `{"target_url":"https://example.com/a"}`)["id"].(string)
	full := f.create(t, `{"target_url":"https://example.com/full","tags":["a","b","c","d","e","f","g","h","i"]}`)["id"].(string)
	before := f.count(t, "SELECT count(*) FROM events WHERE workspace_id = $1", f.tenant.WorkspaceID)
	body := fmt.Sprintf(`{"ids":["%s","%s"],"add_tags":["x","y"],"atomic":true}`, a, full)
	p := testkit.Problem(t, f.srv.Do(t, "PATCH", "/api/v1/links/bulk", f.token, body), 422, "validation-failed")
	if s := fmt.Sprint(p["errors"]); !strings.Contains(s, "/ids/1") || strings.Contains(s, "/ids/0") || !strings.Contains(s, "10 tags") {
		t.Errorf("atomic refusal: %v", p["errors"])
	}
	if tags := f.tagsOf(t, a); len(tags) != 0 {
		t.Errorf("a was changed by a rejected batch: %v", tags)
	}
	if n := f.count(t, "SELECT count(*) FROM events WHERE workspace_id = $1", f.tenant.WorkspaceID); n != before {
		t.Errorf("a rejected batch wrote %d events", n-before)
	}
	// Without atomic the full link fails alone.
	got := testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/links/bulk", f.token, strings.Replace(body, `,"atomic":true`, "", 1)), 200)
	if s := fmt.Sprint(got["data"]); !strings.Contains(s, "status:200") || !strings.Contains(s, "status:422") {
		t.Errorf("per item: %v", s)
	}
}

// TestBulkEditRefusals: what is wrong with the request as a whole.
func TestBulkEditRefusals(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	a := f.create(t, `{"target_url":"https://example.com/a"}`)["id"].(string)
	many := strings.TrimSuffix(strings.Repeat(`"`+a+`",`, 1001), ",")
	for body, pointer := range map[string]string{
		`{"add_tags":["x"]}`:                                         "/ids",
		`{"ids":[],"add_tags":["x"]}`:                                "/ids",
		`{"ids":[` + many + `],"add_tags":["x"]}`:                    "/ids",
		`{"ids":["` + a + `"]}`:                                      "nothing to change",
		`{"ids":["` + a + `"],"status":"gone"}`:                      "/status",
		`{"ids":["` + a + `"],"add_tags":["x"],"remove_tags":["X"]}`: "/remove_tags",
		`{"ids":["` + a + `"],"add_tags":["bad/tag"]}`:               "/add_tags/0",
		`{"ids":["` + a + `"],"tags":["x"]}`:                         "/tags",
		`{"ids":["` + a + `"],"expires_at":"2001-01-01T00:00:00Z"}`:  "/expires_at",
	} {
		p := testkit.Problem(t, f.srv.Do(t, "PATCH", "/api/v1/links/bulk", f.token, body), 422, "validation-failed")
		if s := fmt.Sprint(p["errors"]); !strings.Contains(s, pointer) {
			t.Errorf("%.80s: errors %v, want %s", body, s, pointer)
		}
	}
	readOnly := f.srv.APIKey(t, f.tenant.WorkspaceID, "links:read")
	wantStatus(t, f.srv.Do(t, "PATCH", "/api/v1/links/bulk", readOnly, `{"ids":["`+a+`"],"add_tags":["x"]}`), 403)
	wantStatus(t, f.srv.Do(t, "DELETE", "/api/v1/links/bulk?ids="+a, readOnly, ""), 403)
}

// TestBulkDelete: each id on its own or all at once; one link.deleted per
// deleted link, the link as it was in the answer; the Idempotency-Key
// covers the query.
func TestBulkDelete(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	a := f.create(t, `{"target_url":"https://example.com/a"}`)["id"].(string)
	b := f.create(t, `{"target_url":"https://example.com/b"}`)["id"].(string)
	theirs := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links", f.otherTk, `{"target_url":"https://example.com/theirs"}`), 201)["id"].(string)

	p := testkit.Problem(t, f.srv.Do(t, "DELETE", "/api/v1/links/bulk?atomic=true&ids="+a+","+theirs, f.token, ""), 422, "validation-failed")
	if s := fmt.Sprint(p["errors"]); !strings.Contains(s, "/query/ids/1") {
		t.Errorf("atomic: %v", s)
	}
	if f.liveLinks(t) != 2 {
		t.Fatal("a rejected atomic deletion deleted something")
	}
	resp := f.srv.Do(t, "DELETE", "/api/v1/links/bulk?ids="+a+","+theirs+","+b, f.token, "", "Idempotency-Key", "bulk-del-1")
	got := testkit.JSON(t, resp, 200)
	data := got["data"].([]any)
	if len(data) != 3 || data[0].(map[string]any)["status"] != float64(200) || data[1].(map[string]any)["status"] != float64(404) ||
		data[2].(map[string]any)["link"].(map[string]any)["id"] != b {
		t.Fatalf("data = %v", data)
	}
	if f.liveLinks(t) != 0 {
		t.Error("links left")
	}
	if n := f.count(t, "SELECT count(*) FROM events WHERE workspace_id = $1 AND type = 'link.deleted'", f.tenant.WorkspaceID); n != 2 {
		t.Errorf("%d link.deleted events, want 2", n)
	}
	if n := f.count(t, "SELECT count(*) FROM links WHERE workspace_id = $1 AND deleted_at IS NULL", f.other.WorkspaceID); n != 1 {
		t.Error("another workspace's link was deleted")
	}
	// The same key with other ids is another request.
	wantStatus(t, f.srv.Do(t, "DELETE", "/api/v1/links/bulk?ids="+a, f.token, "", "Idempotency-Key", "bulk-del-1"), 422)
	replay := f.srv.Do(t, "DELETE", "/api/v1/links/bulk?ids="+a+","+theirs+","+b, f.token, "", "Idempotency-Key", "bulk-del-1")
	if replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay not marked: %v", replay.Header)
	}
	testkit.JSON(t, replay, 200)
	for _, q := range []string{"", "?ids=", "?ids=" + a + "&ids=" + b, "?ids=" + a + "&atomic=yes", "?ids=" + a + "&force=1"} {
		wantStatus(t, f.srv.Do(t, "DELETE", "/api/v1/links/bulk"+q, f.token, ""), 422)
	}
}
