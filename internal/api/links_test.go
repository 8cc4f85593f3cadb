package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
)

// linksFixture is a server with two tenants and a full-scope key for each.
type linksFixture struct {
	srv            *testkit.Server
	tenant, other  testkit.Tenant
	token, otherTk string
}

func newLinksFixture(t *testing.T) *linksFixture {
	t.Helper()
	srv := testkit.StartServer(t)
	f := &linksFixture{srv: srv, tenant: testkit.NewTenant(t, srv.Pool), other: testkit.NewTenant(t, srv.Pool)}
	f.token = srv.APIKey(t, f.tenant.WorkspaceID)
	f.otherTk = srv.APIKey(t, f.other.WorkspaceID)
	return f
}

func (f *linksFixture) create(t *testing.T, body string) map[string]any {
	t.Helper()
	return testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links", f.token, body), 201)
}

// get reads the link id with token, which must answer 200.
func (f *linksFixture) get(t *testing.T, token, id string) map[string]any {
	t.Helper()
	return testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links/"+id, token, ""), 200)
}

// events returns the types and data of the workspace's events, oldest first.
func (f *linksFixture) events(t *testing.T) []map[string]any {
	t.Helper()
	rows, err := f.srv.Pool.Query(context.Background(), "SELECT type, data FROM events WHERE workspace_id = $1 ORDER BY id", f.tenant.WorkspaceID)
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

var generatedCode = regexp.MustCompile(`^[A-Za-z0-9]{7}$`)

func TestCreateLink201(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	resp := f.srv.Do(t, "POST", "/api/v1/links", f.token, `{"target_url":"https://example.com/menu","title":"Spring menu"}`)
	loc := resp.Header.Get("Location")
	l := testkit.JSON(t, resp, 201)
	if !generatedCode.MatchString(l["code"].(string)) {
		t.Errorf("generated code %v", l["code"])
	}
	if l["short_url"] != f.srv.URL+"/"+l["code"].(string) || loc != f.srv.URL+"/api/v1/links/"+l["id"].(string) {
		t.Errorf("short_url %v, Location %q", l["short_url"], loc)
	}
	for k, want := range map[string]any{"object": "link", "workspace_id": f.tenant.WorkspaceExternalID(), "target_url": "https://example.com/menu",
		"title": "Spring menu", "status": "active", "expires_at": nil, "scan_count": float64(0), "last_scanned_at": nil} {
		if got, ok := l[k]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, want)
		}
	}
	if !strings.HasSuffix(l["created_at"].(string), "Z") {
		t.Errorf("created_at %v must be UTC", l["created_at"])
	}
	ev := f.events(t)
	if len(ev) != 1 || ev[0]["_type"] != "link.created" || !reflect.DeepEqual(ev[0]["link"], l) {
		t.Errorf("events %v, want link.created carrying exactly the link object the API returned (%v)", ev, l)
	}

	custom := f.create(t, `{"target_url":"http://example.com","code":"Spring-26_x","expires_at":"2099-01-01T00:00:00+02:00","title":null}`)
	if custom["code"] != "Spring-26_x" || custom["expires_at"] != "2098-12-31T22:00:00Z" || custom["title"] != nil {
		t.Errorf("custom %v", custom)
	}
}

func TestCreateLink409(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	l := f.create(t, `{"target_url":"https://example.com","code":"taken"}`)
	p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/links", f.otherTk, `{"target_url":"https://example.com","code":"taken"}`), 409, "conflict")
	if !strings.Contains(p["detail"].(string), `"taken"`) {
		t.Errorf("detail %v", p["detail"])
	}
	resp := f.srv.Do(t, "DELETE", "/api/v1/links/"+l["id"].(string), f.token, "")
	resp.Body.Close()
	testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/links", f.token, `{"target_url":"https://example.com","code":"taken"}`), 409, "conflict")
	// Codes are case-sensitive.
	f.create(t, `{"target_url":"https://example.com","code":"TAKEN"}`)
}

func TestCreateLink422(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	long := "https://example.com/" + strings.Repeat("a", 2048)
	cases := []struct {
		body     string
		pointers []string
	}{
		{`{}`, []string{"/target_url"}},
		{`{"target_url":null}`, []string{"/target_url"}},
		{`{"target_url":42}`, []string{"/target_url"}},
		{`{"target_url":"ftp://example.com"}`, []string{"/target_url"}},
		{`{"target_url":"/relative"}`, []string{"/target_url"}},
		{`{"target_url":"https://"}`, []string{"/target_url"}},
		{`{"target_url":"https://user:pw@example.com"}`, []string{"/target_url"}},
		{`{"target_url":"https://exa mple.com"}`, []string{"/target_url"}},
		{`{"target_url":"` + long + `"}`, []string{"/target_url"}},
		{`{"target_url":"https://example.com","title":"` + strings.Repeat("é", 201) + `"}`, []string{"/title"}},
		{`{"target_url":"https://example.com","title":false}`, []string{"/title"}},
		{`{"target_url":"https://example.com","title":"nul\u0000byte"}`, []string{"/title"}},
		{`{"target_url":"https://example.com","title":"line\nbreak"}`, []string{"/title"}},
		{`{"target_url":"https://example.com:99999/"}`, []string{"/target_url"}},
		{`{"target_url":"https://example.com:0/"}`, []string{"/target_url"}},
		{`{"target_url":"https://example.com","code":null}`, []string{"/code"}},
		{`{"target_url":"https://example.com","code":42}`, []string{"/code"}},
		{`{"target_url":"https://example.com","code":"ab"}`, []string{"/code"}},
		{`{"target_url":"https://example.com","code":"` + strings.Repeat("a", 65) + `"}`, []string{"/code"}},
		{`{"target_url":"https://example.com","code":"has space"}`, []string{"/code"}},
		{`{"target_url":"https://example.com","code":"docs"}`, []string{"/code"}},
		{`{"target_url":"https://example.com","code":"API"}`, []string{"/code"}},
		{`{"target_url":"https://example.com","code":"healthz"}`, []string{"/code"}},
		{`{"target_url":"https://example.com","expires_at":"2001-01-01T00:00:00Z"}`, []string{"/expires_at"}},
		{`{"target_url":"https://example.com","expires_at":"tomorrow"}`, []string{"/expires_at"}},
		{`{"target_url":"https://example.com","status":"active"}`, []string{"/status"}},
		{`{"target_url":"ftp://x","code":"a","bogus":1,"a/b":2}`, []string{"/a~1b", "/bogus", "/target_url", "/code"}},
		{`[]`, []string{""}},
		{`"string"`, []string{""}},
	}
	for _, tc := range cases {
		p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/links", f.token, tc.body), 422, "validation-failed")
		var got []string
		for _, e := range p["errors"].([]any) {
			got = append(got, e.(map[string]any)["pointer"].(string))
		}
		if strings.Join(got, " ") != strings.Join(tc.pointers, " ") {
			t.Errorf("%.80s: pointers %v, want %v", tc.body, got, tc.pointers)
		}
	}
	if ev := f.events(t); len(ev) != 0 {
		t.Errorf("rejected requests created events: %v", ev)
	}
	list := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links", f.token, ""), 200)
	if n := len(list["data"].([]any)); n != 0 {
		t.Errorf("rejected requests created %d links", n)
	}
}

func TestRequestBodyRules(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	post := func(contentType, body string) *http.Response {
		req, _ := http.NewRequest("POST", f.srv.URL+"/api/v1/links", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+f.token)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	good := `{"target_url":"https://example.com"}`
	testkit.Problem(t, post("", good), 415, "unsupported-media-type")
	testkit.Problem(t, post("text/plain", good), 415, "unsupported-media-type")
	testkit.Problem(t, post("application/json; charset=latin1", good), 415, "unsupported-media-type")
	testkit.JSON(t, post("application/json; charset=UTF-8", good), 201)
	testkit.Problem(t, post("application/json", `{"target_url":`), 400, "invalid-request")
	testkit.Problem(t, post("application/json", good+` {}`), 400, "invalid-request")
	testkit.Problem(t, post("application/json", good+`x`), 400, "invalid-request")
	testkit.Problem(t, post("application/json", ``), 400, "invalid-request")
	big := `{"target_url":"https://example.com","title":"` + strings.Repeat("a", 70<<10) + `"}`
	testkit.Problem(t, post("application/json", big), 413, "payload-too-large")
	testkit.JSON(t, post("application/json", good+"\n  \t"), 201) // trailing whitespace is fine
	// Invalid UTF-8 is refused, never silently replaced with U+FFFD: in a
	// string, in a member name, and outside any string.
	for _, body := range []string{
		"{\"target_url\":\"https://example.com\",\"title\":\"caf\xe9\"}",
		"{\"target_url\":\"https://example.com\",\"ti\xfftle\":\"x\"}",
		"{\"target_url\":\"https://example.com\"}\xff",
	} {
		p := testkit.Problem(t, post("application/json", body), 400, "invalid-request")
		if !strings.Contains(p["detail"].(string), "UTF-8") {
			t.Errorf("%q: detail %v", body, p["detail"])
		}
	}
}

func TestGetLink404(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	mine := f.create(t, `{"target_url":"https://example.com"}`)
	theirs := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links", f.otherTk, `{"target_url":"https://example.com"}`), 201)
	deleted := f.create(t, `{"target_url":"https://example.com"}`)
	f.srv.Do(t, "DELETE", "/api/v1/links/"+deleted["id"].(string), f.token, "").Body.Close()

	f.get(t, f.token, mine["id"].(string))
	for _, id := range []string{"nope", "lnk_", "ws_" + mine["id"].(string)[4:], "lnk_00000000000000000000000000", theirs["id"].(string), deleted["id"].(string)} {
		for _, method := range []string{"GET", "PATCH", "DELETE"} {
			body := ""
			if method == "PATCH" {
				body = `{"title":"x"}`
			}
			testkit.Problem(t, f.srv.Do(t, method, "/api/v1/links/"+id, f.token, body), 404, "not-found")
		}
	}
	// The other workspace's link is untouched.
	got := f.get(t, f.otherTk, theirs["id"].(string))
	if got["title"] != nil {
		t.Errorf("other workspace's link changed: %v", got)
	}
}

func TestListLinks(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	var ids []string
	for i := range 5 {
		ids = append(ids, f.create(t, fmt.Sprintf(`{"target_url":"https://example.com/%d"}`, i))["id"].(string))
	}
	testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links", f.otherTk, `{"target_url":"https://example.com/other"}`), 201)

	var seen []string
	cursor := ""
	for page := 0; ; page++ {
		path := "/api/v1/links?limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		l := testkit.JSON(t, f.srv.Do(t, "GET", path, f.token, ""), 200)
		for _, d := range l["data"].([]any) {
			seen = append(seen, d.(map[string]any)["id"].(string))
		}
		if l["object"] != "list" {
			t.Fatalf("object %v", l["object"])
		}
		if l["has_more"] == false {
			if l["next_cursor"] != nil {
				t.Errorf("next_cursor %v on the last page", l["next_cursor"])
			}
			break
		}
		cursor = l["next_cursor"].(string)
		if page > 5 {
			t.Fatal("pagination does not end")
		}
	}
	want := []string{ids[4], ids[3], ids[2], ids[1], ids[0]}
	if strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Errorf("pages %v, want newest first %v", seen, want)
	}
	def := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links", f.token, ""), 200)
	if len(def["data"].([]any)) != 5 || def["has_more"] != false {
		t.Errorf("default page %v", def)
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=abc", "limit=1.5", "limit=", "limt=5"} {
		p := testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links?"+q, f.token, ""), 422, "validation-failed")
		ptr := p["errors"].([]any)[0].(map[string]any)["pointer"]
		if want := "/query/" + strings.SplitN(q, "=", 2)[0]; ptr != want {
			t.Errorf("%s: pointer %v, want %s", q, ptr, want)
		}
	}
	for _, c := range []string{"garbage!", "AAAA", "%ZZ"} {
		testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links?cursor="+c, f.token, ""), 400, "invalid-request")
	}
	// A repeated parameter is reported as repeated, whatever its values.
	for _, q := range []string{"limit=5&limit=6", "limit=5&limit=5", "cursor=" + cursor + "&cursor=" + cursor} {
		p := testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links?"+q, f.token, ""), 422, "validation-failed")
		errs := p["errors"].([]any)
		e := errs[0].(map[string]any)
		if want := "/query/" + strings.SplitN(q, "=", 2)[0]; len(errs) != 1 || e["pointer"] != want || e["detail"] != "must be given at most once" {
			t.Errorf("%s: errors %v, want one on %s saying it must be given at most once", q, errs, want)
		}
	}
}

func TestListLinksSearch(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	menu := f.create(t, `{"target_url":"https://example.com/spring-menu","title":"Spring"}`)
	titled := f.create(t, `{"target_url":"https://example.com/a","title":"Winter MENU card"}`)
	coded := f.create(t, `{"target_url":"https://example.com/b","code":"menu-2026"}`)
	f.create(t, `{"target_url":"https://example.com/c","title":"Opening hours"}`)
	paused := f.create(t, `{"target_url":"https://example.com/d","title":"Old menu"}`)
	testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/links/"+paused["id"].(string), f.token, `{"status":"paused"}`), 200)
	deleted := f.create(t, `{"target_url":"https://example.com/menu-gone"}`)
	if r := f.srv.Do(t, "DELETE", "/api/v1/links/"+deleted["id"].(string), f.token, ""); r.StatusCode != 204 {
		t.Fatalf("delete: %d", r.StatusCode)
	}
	// Another workspace's link matches the term too and must never show.
	testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links", f.otherTk, `{"target_url":"https://example.com/menu-other"}`), 201)

	ids := func(path string) []string {
		t.Helper()
		var out []string
		for cursor := ""; ; {
			p := path
			if cursor != "" {
				p += "&cursor=" + cursor
			}
			l := testkit.JSON(t, f.srv.Do(t, "GET", p, f.token, ""), 200)
			for _, d := range l["data"].([]any) {
				out = append(out, d.(map[string]any)["id"].(string))
			}
			if l["has_more"] == false {
				return out
			}
			cursor = l["next_cursor"].(string)
		}
	}
	want := func(ls ...map[string]any) string {
		var out []string
		for _, l := range ls {
			out = append(out, l["id"].(string))
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		query string
		want  string
	}{
		{"q=menu&limit=1", want(paused, coded, titled, menu)}, // pages of one, newest first
		{"q=%20MeNu%20", want(paused, coded, titled, menu)},
		{"q=menu&status=active", want(coded, titled, menu)},
		{"q=menu&status=paused", want(paused)},
		{"status=paused", want(paused)},
		{"q=spring-m", want(menu)},
		{"q=%25", ""}, // "%" matches a literal percent sign, not everything
		{"q=nothing-like-this", ""},
	} {
		if got := strings.Join(ids("/api/v1/links?"+tc.query), ","); got != tc.want {
			t.Errorf("GET /api/v1/links?%s: %s, want %s", tc.query, got, tc.want)
		}
	}
	for q, ptr := range map[string]string{
		"status=gone":                   "/query/status",
		"q=" + strings.Repeat("x", 201): "/query/q",
		"q=a%00b":                       "/query/q",
	} {
		p := testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links?"+q, f.token, ""), 422, "validation-failed")
		if got := p["errors"].([]any)[0].(map[string]any)["pointer"]; got != ptr {
			t.Errorf("%s: pointer %v, want %s", q[:min(len(q), 20)], got, ptr)
		}
	}
}

func TestUpdateLink(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	l := f.create(t, `{"target_url":"https://old.example","title":"Menu"}`)
	id := l["id"].(string)

	up := testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/links/"+id, f.token, `{"target_url":"https://new.example","title":"Menu"}`), 200)
	if up["target_url"] != "https://new.example" || up["updated_at"] == l["updated_at"] {
		t.Errorf("updated %v", up)
	}
	ev := f.events(t)
	last := ev[len(ev)-1]
	prev := last["previous_attributes"].(map[string]any)
	if last["_type"] != "link.updated" || len(prev) != 1 || prev["target_url"] != "https://old.example" {
		t.Errorf("link.updated event %v", last)
	}
	if !reflect.DeepEqual(last["link"], up) {
		t.Errorf("event link %v, want exactly the API's answer %v", last["link"], up)
	}

	// Nothing changed: no event, no new updated_at.
	same := testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/links/"+id, f.token, `{"target_url":"https://new.example"}`), 200)
	if same["updated_at"] != up["updated_at"] || len(f.events(t)) != len(ev) {
		t.Errorf("a no-op PATCH wrote something")
	}

	cleared := testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/links/"+id, f.token, `{"title":null,"status":"paused","expires_at":"2099-01-01T00:00:00Z"}`), 200)
	if cleared["title"] != nil || cleared["status"] != "paused" || cleared["expires_at"] != "2099-01-01T00:00:00Z" {
		t.Errorf("cleared %v", cleared)
	}
	ev = f.events(t)
	prev = ev[len(ev)-1]["previous_attributes"].(map[string]any)
	if len(prev) != 3 || prev["title"] != "Menu" || prev["status"] != "active" || prev["expires_at"] != nil {
		t.Errorf("previous_attributes %v", prev)
	}

	for body, ptr := range map[string]string{
		`{"target_url":null}`:                       "/target_url",
		`{"status":"deleted"}`:                      "/status",
		`{"status":null}`:                           "/status",
		`{"code":"newcode"}`:                        "/code",
		`{"expires_at":"2000-01-01T00:00:00Z"}`:     "/expires_at",
		`{"title":"nul\u0000byte"}`:                 "/title",
		`{"target_url":"http://example.com:65536"}`: "/target_url",
	} {
		p := testkit.Problem(t, f.srv.Do(t, "PATCH", "/api/v1/links/"+id, f.token, body), 422, "validation-failed")
		if got := p["errors"].([]any)[0].(map[string]any)["pointer"]; got != ptr {
			t.Errorf("%s: pointer %v, want %s", body, got, ptr)
		}
	}
}

func TestDeleteLink(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	l := f.create(t, `{"target_url":"https://example.com"}`)
	id := l["id"].(string)
	resp := f.srv.Do(t, "DELETE", "/api/v1/links/"+id, f.token, "")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 204 || len(body) != 0 {
		t.Fatalf("delete: %d %q", resp.StatusCode, body)
	}
	ev := f.events(t)
	if last := ev[len(ev)-1]; last["_type"] != "link.deleted" || last["link"].(map[string]any)["id"] != id {
		t.Errorf("events %v", ev)
	}
	testkit.Problem(t, f.srv.Do(t, "DELETE", "/api/v1/links/"+id, f.token, ""), 404, "not-found")
}

func TestLinkScopes(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	readOnly := f.srv.APIKey(t, f.tenant.WorkspaceID, "links:read")
	writeOnly := f.srv.APIKey(t, f.tenant.WorkspaceID, "links:write")
	resp := f.srv.Do(t, "POST", "/api/v1/links", readOnly, `{"target_url":"https://example.com"}`)
	if got := resp.Header.Get("WWW-Authenticate"); got != `Bearer error="insufficient_scope", scope="links:write"` {
		t.Errorf("WWW-Authenticate %q", got)
	}
	p := testkit.Problem(t, resp, 403, "insufficient-scope")
	if p["required_scope"] != "links:write" {
		t.Errorf("required_scope %v", p["required_scope"])
	}
	l := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links", writeOnly, `{"target_url":"https://example.com"}`), 201)
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links/"+l["id"].(string), writeOnly, ""), 403, "insufficient-scope")
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links", writeOnly, ""), 403, "insufficient-scope")
	testkit.Problem(t, f.srv.Do(t, "DELETE", "/api/v1/links/"+l["id"].(string), readOnly, ""), 403, "insufficient-scope")
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links", "", ""), 401, "unauthorized")
}

func TestExpiredLinkStillListed(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	exp := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	l := f.create(t, `{"target_url":"https://example.com","expires_at":"`+exp+`"}`)
	if l["expires_at"] != exp {
		t.Errorf("expires_at %v, want %s", l["expires_at"], exp)
	}
}
