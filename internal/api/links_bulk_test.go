package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/testkit"
)

// mixedBatch is n items where every 10th has a bad target, item 5 uses
// a code another link holds, and items 7 and 8 ask for one new code.
func mixedBatch(n int, taken string) (body string, bad map[int]string) {
	items := make([]string, n)
	bad = map[int]string{}
	for i := range items {
		items[i] = fmt.Sprintf(`{"target_url":"https://example.com/shop/%d","tags":["Shops"," Print "]}`, i)
		switch {
		case i%10 == 3:
			items[i] = `{"target_url":"ftp://example.com/x"}`
			bad[i] = fmt.Sprintf("/links/%d/target_url", i)
		case i == 5:
			items[i] = fmt.Sprintf(`{"target_url":"https://example.com/five","code":%q}`, taken)
			bad[i] = fmt.Sprintf("/links/%d/code", i)
		case i == 7 || i == 8:
			items[i] = `{"target_url":"https://example.com/twin","code":"bulk-twin"}`
			if i == 8 {
				bad[i] = "/links/8/code"
			}
		}
	}
	return `{"links":[` + strings.Join(items, ",") + `]}`, bad
}

func (f *linksFixture) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := f.srv.Pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *linksFixture) liveLinks(t *testing.T) int {
	return f.count(t, "SELECT count(*) FROM links WHERE workspace_id = $1 AND deleted_at IS NULL", f.tenant.WorkspaceID)
}

func (f *linksFixture) linkEvents(t *testing.T) int {
	return f.count(t, "SELECT count(*) FROM events WHERE workspace_id = $1 AND type = 'link.created'", f.tenant.WorkspaceID)
}

func TestBulkCreatePerItem(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	f.create(t, `{"target_url":"https://example.com","code":"bulk-taken"}`)
	body, bad := mixedBatch(1000, "bulk-taken")

	resp := f.srv.Do(t, "POST", "/api/v1/links/bulk", f.token, body, "Idempotency-Key", "bulk-1")
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %.500s", resp.StatusCode, raw)
	}
	var res struct {
		Object          string
		Created, Failed int
		Data            []struct {
			Index, Status int
			Link          map[string]any
			Error         map[string]any
		}
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if res.Object != "bulk_result" || res.Created != 1000-len(bad) || res.Failed != len(bad) || len(res.Data) != 1000 {
		t.Fatalf("object %q created %d failed %d items %d; want %d failed", res.Object, res.Created, res.Failed, len(res.Data), len(bad))
	}
	for i, d := range res.Data {
		want, failed := bad[i]
		switch {
		case d.Index != i:
			t.Fatalf("item %d has index %d", i, d.Index)
		case !failed && (d.Status != 201 || d.Link == nil || d.Error != nil):
			t.Fatalf("item %d: %+v, want 201 with a link", i, d)
		case failed && (d.Link != nil || d.Error == nil):
			t.Fatalf("item %d: %+v, want an error", i, d)
		case failed && strings.HasSuffix(want, "/code"):
			if d.Status != 409 || !strings.HasSuffix(d.Error["type"].(string), "/problems/conflict") {
				t.Errorf("item %d: %d %v, want 409 conflict", i, d.Status, d.Error)
			}
		case failed:
			errs, _ := d.Error["errors"].([]any)
			if d.Status != 422 || len(errs) != 1 || errs[0].(map[string]any)["pointer"] != want {
				t.Errorf("item %d: %d %v, want 422 at %s", i, d.Status, d.Error, want)
			}
		}
		if !failed && i != 7 && fmt.Sprint(d.Link["tags"]) != "[print shops]" {
			t.Errorf("item %d tags %v, want [print shops]", i, d.Link["tags"])
		}
	}
	// Every reported 201 exists, nothing else was created, one event each.
	if got := f.liveLinks(t); got != res.Created+1 {
		t.Errorf("%d live links, want %d", got, res.Created+1)
	}
	if got := f.linkEvents(t); got != res.Created+1 {
		t.Errorf("%d link.created events, want %d", got, res.Created+1)
	}
	for _, d := range res.Data[:50] {
		if d.Link != nil {
			f.get(t, f.token, d.Link["id"].(string))
		}
	}

	// A replay returns the same answer and creates nothing.
	again := f.srv.Do(t, "POST", "/api/v1/links/bulk", f.token, body, "Idempotency-Key", "bulk-1")
	raw2, _ := io.ReadAll(again.Body)
	again.Body.Close()
	if again.StatusCode != 200 || again.Header.Get("Idempotent-Replayed") != "true" || string(raw2) != string(raw) {
		t.Errorf("replay: %d replayed=%q same=%v", again.StatusCode, again.Header.Get("Idempotent-Replayed"), string(raw2) == string(raw))
	}
	if got := f.liveLinks(t); got != res.Created+1 {
		t.Errorf("after replay %d live links, want %d", got, res.Created+1)
	}
}

func TestBulkCreateAtomic(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	f.create(t, `{"target_url":"https://example.com","code":"bulk-taken"}`)
	body, bad := mixedBatch(1000, "bulk-taken")
	atomic := strings.Replace(body, `{"links":`, `{"atomic":true,"links":`, 1)

	p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/links/bulk", f.token, atomic, "Idempotency-Key", "a-1"), 422, "validation-failed")
	pointers := map[string]bool{}
	for _, e := range p["errors"].([]any) {
		pointers[e.(map[string]any)["pointer"].(string)] = true
	}
	for i, ptr := range bad {
		if !strings.HasSuffix(ptr, "/code") && !pointers[ptr] {
			t.Errorf("item %d: no error at %s in %v", i, ptr, p["errors"])
		}
	}
	if f.liveLinks(t) != 1 || f.linkEvents(t) != 1 {
		t.Fatalf("a refused atomic batch created %d links, %d events", f.liveLinks(t)-1, f.linkEvents(t)-1)
	}

	// Only the taken codes wrong: found at creation, and rolled back.
	items := make([]string, 300)
	for i := range items {
		items[i] = fmt.Sprintf(`{"target_url":"https://example.com/%d"}`, i)
	}
	items[299] = `{"target_url":"https://example.com/x","code":"bulk-taken"}`
	p = testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/links/bulk", f.token, `{"atomic":true,"links":[`+strings.Join(items, ",")+`]}`), 422, "validation-failed")
	if errs := p["errors"].([]any); len(errs) != 1 || errs[0].(map[string]any)["pointer"] != "/links/299/code" {
		t.Errorf("errors %v, want one at /links/299/code", errs)
	}
	if f.liveLinks(t) != 1 || f.linkEvents(t) != 1 {
		t.Fatalf("a batch rolled back at creation left %d links, %d events", f.liveLinks(t)-1, f.linkEvents(t)-1)
	}

	items[299] = `{"target_url":"https://example.com/x","code":"bulk-own"}`
	res := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links/bulk", f.token, `{"atomic":true,"links":[`+strings.Join(items, ",")+`]}`), 200)
	if res["created"] != float64(300) || res["failed"] != float64(0) || f.liveLinks(t) != 301 || f.linkEvents(t) != 301 {
		t.Errorf("created %v failed %v; %d links, %d events", res["created"], res["failed"], f.liveLinks(t), f.linkEvents(t))
	}
}

func TestBulkCreate422(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	tooMany := `{"links":[` + strings.TrimSuffix(strings.Repeat(`{"target_url":"https://example.com"},`, 1001), ",") + `]}`
	cases := []struct{ body, pointer string }{
		{tooMany, "/links"},
		{`{"links":[]}`, "/links"},
		{`{}`, "/links"},
		{`{"links":{}}`, "/links"},
		{`{"links":[{"target_url":"https://example.com"}],"atomic":"yes"}`, "/atomic"},
		{`{"links":[{"target_url":"https://example.com"}],"extra":1}`, "/extra"},
	}
	for _, c := range cases {
		p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/links/bulk", f.token, c.body), 422, "validation-failed")
		if errs := p["errors"].([]any); errs[0].(map[string]any)["pointer"] != c.pointer {
			t.Errorf("%.80s: errors %v, want %s", c.body, errs, c.pointer)
		}
	}
	// An item that is not an object fails alone.
	res := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links/bulk", f.token, `{"links":[5,{"target_url":"https://example.com"}]}`), 200)
	if res["created"] != float64(1) || res["failed"] != float64(1) {
		t.Errorf("result %v", res)
	}
	if f.liveLinks(t) != 1 {
		t.Errorf("%d links", f.liveLinks(t))
	}
	// Another workspace's domain is unusable, item by item.
	res = testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links/bulk", f.token, `{"links":[{"target_url":"https://example.com","domain":"go.other.test"}]}`), 200)
	item := res["data"].([]any)[0].(map[string]any)
	if item["status"] != float64(422) || !strings.Contains(fmt.Sprint(item["error"]), "/links/0/domain") {
		t.Errorf("item %v", item)
	}
}

func TestBulkCreateCostsItsItems(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	limit := 50
	_, token, err := f.srv.App.Keys.Create(context.Background(), f.tenant.WorkspaceID, nil, apikey.CreateInput{
		Name: "small", Scopes: []string{"links:write", "links:read"}, RateLimitPerMinute: &limit})
	if err != nil {
		t.Fatal(err)
	}
	batch := func(n int) string {
		return `{"links":[` + strings.TrimSuffix(strings.Repeat(`{"target_url":"https://example.com"},`, n), ",") + `]}`
	}
	// 1,000 links cost 101 requests: never within 50 a minute.
	p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/links/bulk", token, batch(1000)), 422, "validation-failed")
	if !strings.Contains(p["detail"].(string)+fmt.Sprint(p["errors"]), "490") {
		t.Errorf("detail should say how many links fit (490): %v", p)
	}
	// 300 links cost 1 + 30; the next 300 do not fit in what is left.
	resp := f.srv.Do(t, "POST", "/api/v1/links/bulk", token, batch(300))
	testkit.JSON(t, resp, 200)
	if rem := resp.Header.Get("RateLimit-Remaining"); rem != "18" {
		t.Errorf("RateLimit-Remaining %q after 31 of 50, want 18", rem)
	}
	for range 2 { // a 429 is not kept under the key: the retry runs again
		resp = f.srv.Do(t, "POST", "/api/v1/links/bulk", token, batch(300), "Idempotency-Key", "cost-1")
		testkit.Problem(t, resp, 429, "rate-limited")
		if resp.Header.Get("Retry-After") == "" || resp.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("Retry-After %q, replayed %q", resp.Header.Get("Retry-After"), resp.Header.Get("Idempotent-Replayed"))
		}
	}
	if f.liveLinks(t) != 300 {
		t.Errorf("%d links, want 300", f.liveLinks(t))
	}
}

func TestTags(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	a := f.create(t, `{"target_url":"https://example.com/a","tags":["Print ","print","Spring-2027"]}`)
	if fmt.Sprint(a["tags"]) != "[print spring-2027]" {
		t.Errorf("tags %v, want normalised [print spring-2027]", a["tags"])
	}
	b := f.create(t, `{"target_url":"https://example.com/b","tags":["print","Überall 2"]}`)
	c := f.create(t, `{"target_url":"https://example.com/c"}`)
	if fmt.Sprint(c["tags"]) != "[]" {
		t.Errorf("no tags: %v", c["tags"])
	}
	f.srv.Do(t, "POST", "/api/v1/links", f.otherTk, `{"target_url":"https://example.com/o","tags":["print","secret"]}`).Body.Close()

	ids := func(path, token string) string {
		l := testkit.JSON(t, f.srv.Do(t, "GET", path, token, ""), 200)
		var out []string
		for _, d := range l["data"].([]any) {
			out = append(out, d.(map[string]any)["code"].(string))
		}
		return strings.Join(out, ",")
	}
	if got, want := ids("/api/v1/links?tag=PRINT", f.token), b["code"].(string)+","+a["code"].(string); got != want {
		t.Errorf("tag=print: %s, want %s", got, want)
	}
	if got := ids("/api/v1/links?tag=print&tag=spring-2027", f.token); got != a["code"] {
		t.Errorf("tag=print&tag=spring-2027: %s, want only %s", got, a["code"])
	}
	if got := ids("/api/v1/links?tag=print&q=example.com/b", f.token); got != b["code"] {
		t.Errorf("tag and q: %s", got)
	}
	if got := ids("/api/v1/links?tag=secret", f.token); got != "" {
		t.Errorf("another workspace's tag leaks: %s", got)
	}
	if got := ids("/api/v1/links?tag=print&limit=1", f.token); got != b["code"] {
		t.Errorf("first page: %s", got)
	}

	tags := func() string {
		l := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/tags", f.token, ""), 200)
		var out []string
		for _, d := range l["data"].([]any) {
			m := d.(map[string]any)
			out = append(out, fmt.Sprintf("%s:%v", m["name"], m["link_count"]))
		}
		return strings.Join(out, ",")
	}
	if got := tags(); got != "print:2,spring-2027:1,überall 2:1" {
		t.Errorf("tags %s", got)
	}
	page := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/tags?limit=2", f.token, ""), 200)
	next := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/tags?limit=2&cursor="+page["next_cursor"].(string), f.token, ""), 200)
	if len(next["data"].([]any)) != 1 || next["data"].([]any)[0].(map[string]any)["name"] != "überall 2" {
		t.Errorf("second page %v", next)
	}

	// PATCH replaces the set; a deleted link's tags stop counting.
	upd := testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/links/"+a["id"].(string), f.token, `{"tags":["Menu"]}`), 200)
	if fmt.Sprint(upd["tags"]) != "[menu]" {
		t.Errorf("patched tags %v", upd["tags"])
	}
	f.srv.Do(t, "DELETE", "/api/v1/links/"+b["id"].(string), f.token, "").Body.Close()
	if got := tags(); got != "menu:1" {
		t.Errorf("after PATCH and DELETE: %s", got)
	}
	ev := f.events(t)
	last := ev[len(ev)-2] // link.updated, then link.deleted
	if last["_type"] != "link.updated" || fmt.Sprint(last["previous_attributes"]) != "map[tags:[print spring-2027]]" {
		t.Errorf("event %v", last)
	}

	for body, ptr := range map[string]string{
		`{"target_url":"https://example.com","tags":["a|b"]}`:     "/tags/0",
		`{"target_url":"https://example.com","tags":["ok","  "]}`: "/tags/1",
		`{"target_url":"https://example.com","tags":"print"}`:     "/tags",
		`{"target_url":"https://example.com","tags":[` + strings.Repeat(`"x",`, 3) + strings.TrimSuffix(strings.Repeat(`"t",`, 1), ",") + `,"a","b","c","d","e","f","g","h","i"]}`: "/tags",
		`{"target_url":"https://example.com","tags":["` + strings.Repeat("a", 51) + `"]}`:                                                                                          "/tags/0",
	} {
		p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/links", f.token, body), 422, "validation-failed")
		if errs := p["errors"].([]any); errs[0].(map[string]any)["pointer"] != ptr {
			t.Errorf("%s: %v, want %s", body, errs, ptr)
		}
	}
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links?tag=a%7Cb", f.token, ""), 422, "validation-failed")
	// At most 10 distinct tags (link.ParseFilter): a tag given again counts once.
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links?tag=a&tag=b&tag=c&tag=d&tag=e&tag=f&tag=g&tag=h&tag=i&tag=j&tag=k", f.token, ""), 422, "validation-failed")
	testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links?"+strings.Repeat("tag=a&", 11), f.token, ""), 200)
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/tags?cursor=zzz", f.token, ""), 400, "invalid-request")
}

var _ = http.StatusOK

// TestBulkCreateWithTargeting: bulk items take rules, split and max_scans
// (stored like a single create's), a bad rule fails its item with the
// item's pointer, and a password is refused in bulk (set it with PATCH).
func TestBulkCreateWithTargeting(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	res := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links/bulk", f.token, `{"links":[
		{"target_url":"https://example.com","rules":[{"if":{"os":["iOS"]},"target_url":"https://example.com/ios"}],
		 "split":[{"target_url":"https://example.com/a","weight":30},{"target_url":"https://example.com/b","weight":70}],"max_scans":10},
		{"target_url":"https://example.com","rules":[{"if":{"country":["de"]},"target_url":"https://example.com/de"}]},
		{"target_url":"https://example.com","password":"pw-123"}]}`), 200)
	data := res["data"].([]any)
	first := data[0].(map[string]any)["link"].(map[string]any)
	if r, _ := first["rules"].([]any); len(r) != 1 || first["max_scans"] != float64(10) || len(first["split"].([]any)) != 2 {
		t.Errorf("created %v", first)
	}
	got := f.get(t, f.token, first["id"].(string))
	if r, _ := got["rules"].([]any); len(r) != 1 || got["max_scans"] != float64(10) {
		t.Errorf("stored %v", got)
	}
	for i, want := range []string{"/links/1/rules/0/if/country/0", "/links/2/password"} {
		item := data[i+1].(map[string]any)
		if item["status"] != float64(422) || !strings.Contains(fmt.Sprint(item["error"]), want) {
			t.Errorf("item %d: %v, want an error at %s", i+1, item, want)
		}
	}
}
