package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
	"github.com/linkqr/linkqr/internal/webhook"
)

// publicHook is a public address literal: accepted without DNS, never
// delivered to in these tests (nothing subscribes it to an event that
// happens).
const publicHook = "https://93.184.216.34/linkqr"

var secretPattern = regexp.MustCompile(`^whsec_[A-Z2-7]{52}$`)

// hooksFixture is linksFixture plus helpers for webhook subscriptions.
type hooksFixture struct{ *linksFixture }

func newHooksFixture(t *testing.T, opts ...testkit.ServerOption) hooksFixture {
	t.Helper()
	srv := testkit.StartServer(t, opts...)
	f := &linksFixture{srv: srv, tenant: testkit.NewTenant(t, srv.Pool), other: testkit.NewTenant(t, srv.Pool)}
	f.token = srv.APIKey(t, f.tenant.WorkspaceID)
	f.otherTk = srv.APIKey(t, f.other.WorkspaceID)
	return hooksFixture{f}
}

func (f hooksFixture) createHook(t *testing.T, body string) map[string]any {
	t.Helper()
	return testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/webhooks", f.token, body), 201)
}

func TestWebhookLifecycle(t *testing.T) {
	t.Parallel()
	f := newHooksFixture(t)
	resp := f.srv.Do(t, "POST", "/api/v1/webhooks", f.token, `{"url":"`+publicHook+`","events":["scan.created","link.updated"],"description":"Orders"}`)
	loc := resp.Header.Get("Location")
	h := testkit.JSON(t, resp, 201)
	id, _ := h["id"].(string)
	secret, _ := h["secret"].(string)
	if !strings.HasPrefix(id, "whk_") || loc != f.srv.URL+"/api/v1/webhooks/"+id || !secretPattern.MatchString(secret) {
		t.Fatalf("created %v, Location %q", h, loc)
	}
	for k, want := range map[string]any{"object": "webhook", "workspace_id": f.tenant.WorkspaceExternalID(), "url": publicHook,
		"description": "Orders", "status": "enabled"} {
		if h[k] != want {
			t.Errorf("%s = %v, want %v", k, h[k], want)
		}
	}
	if fmt.Sprint(h["events"]) != "[scan.created link.updated]" {
		t.Errorf("events %v", h["events"])
	}

	got := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/webhooks/"+id, f.token, ""), 200)
	if _, has := got["secret"]; has || got["id"] != id || got["created_at"] != h["created_at"] {
		t.Errorf("GET %v: the secret must not come back", got)
	}

	// PATCH: each field, null description, disable and re-enable.
	p := testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/webhooks/"+id, f.token,
		`{"url":"https://93.184.216.35/v2","events":["link.deleted"],"description":null,"status":"disabled"}`), 200)
	if p["url"] != "https://93.184.216.35/v2" || fmt.Sprint(p["events"]) != "[link.deleted]" || p["description"] != nil || p["status"] != "disabled" {
		t.Errorf("patched %v", p)
	}
	if _, has := p["secret"]; has {
		t.Error("PATCH returned the secret")
	}
	p = testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/webhooks/"+id, f.token, `{"status":"enabled"}`), 200)
	if p["status"] != "enabled" || p["url"] != "https://93.184.216.35/v2" {
		t.Errorf("re-enabled %v", p)
	}

	// Rotate: a new secret, shown once more; no body or {} both work.
	r := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/webhooks/"+id+"/rotate-secret", f.token, ""), 200)
	if s, _ := r["secret"].(string); !secretPattern.MatchString(s) || s == secret || r["id"] != id {
		t.Errorf("rotated %v (old secret %s)", r, secret)
	}
	r2 := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/webhooks/"+id+"/rotate-secret", f.token, "{}"), 200)
	if r2["secret"] == r["secret"] {
		t.Error("a second rotation kept the secret")
	}
	testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/webhooks/"+id+"/rotate-secret", f.token, `{"secret":"mine"}`), 422, "validation-failed")

	// Delete: 204, then 404 for everything.
	del := f.srv.Do(t, "DELETE", "/api/v1/webhooks/"+id, f.token, "")
	del.Body.Close()
	if del.StatusCode != 204 {
		t.Fatalf("delete: %d", del.StatusCode)
	}
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/webhooks/"+id, f.token, ""), 404, "not-found")
	testkit.Problem(t, f.srv.Do(t, "DELETE", "/api/v1/webhooks/"+id, f.token, ""), 404, "not-found")
}

func TestListWebhooksPages(t *testing.T) {
	t.Parallel()
	f := newHooksFixture(t)
	var ids []string
	for i := range 3 {
		ids = append(ids, f.createHook(t, fmt.Sprintf(`{"url":"%s/%d","events":["link.created"]}`, publicHook, i))["id"].(string))
	}
	var got []string
	path := "/api/v1/webhooks?limit=2"
	for range 5 {
		page := testkit.JSON(t, f.srv.Do(t, "GET", path, f.token, ""), 200)
		for _, d := range page["data"].([]any) {
			w := d.(map[string]any)
			if _, has := w["secret"]; has {
				t.Error("a listed webhook carries its secret")
			}
			got = append(got, w["id"].(string))
		}
		if page["has_more"] != true {
			if page["next_cursor"] != nil {
				t.Errorf("last page next_cursor %v", page["next_cursor"])
			}
			break
		}
		path = "/api/v1/webhooks?limit=2&cursor=" + url.QueryEscape(page["next_cursor"].(string))
	}
	if len(got) != 3 || got[0] != ids[2] || got[1] != ids[1] || got[2] != ids[0] {
		t.Errorf("pages %v, want newest first ending %v", got, ids)
	}
	other := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/webhooks", f.otherTk, ""), 200)
	if len(other["data"].([]any)) != 0 {
		t.Errorf("another workspace lists %v", other["data"])
	}
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/webhooks?cursor=nope", f.token, ""), 400, "invalid-request")
	for _, q := range []string{"limit=0", "limit=101", "limit=x", "foo=1"} {
		p := testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/webhooks?"+q, f.token, ""), 422, "validation-failed")
		if want := "/query/" + strings.SplitN(q, "=", 2)[0]; !hasPointer(p, want) {
			t.Errorf("?%s: errors %v lack %s", q, p["errors"], want)
		}
	}
}

// hasPointer reports whether a validation problem names pointer.
func hasPointer(p map[string]any, pointer string) bool {
	errs, _ := p["errors"].([]any)
	for _, e := range errs {
		if e.(map[string]any)["pointer"] == pointer {
			return true
		}
	}
	return false
}

func TestCreateWebhook422(t *testing.T) {
	t.Parallel()
	f := newHooksFixture(t)
	ev := `"events":["link.created"]`
	long := publicHook + "/" + strings.Repeat("a", 2049-len(publicHook)-1)
	cases := []struct {
		body    string
		pointer string
	}{
		{`{` + ev + `}`, "/url"},
		{`{"url":null,` + ev + `}`, "/url"},
		{`{"url":"http://93.184.216.34/h",` + ev + `}`, "/url"},
		{`{"url":"ftp://93.184.216.34/h",` + ev + `}`, "/url"},
		{`{"url":"/relative",` + ev + `}`, "/url"},
		{`{"url":"https://127.0.0.1/h",` + ev + `}`, "/url"},
		{`{"url":"https://10.0.0.8/h",` + ev + `}`, "/url"},
		{`{"url":"https://192.168.1.1/h",` + ev + `}`, "/url"},
		{`{"url":"https://169.254.169.254/latest/meta-data",` + ev + `}`, "/url"},
		{`{"url":"https://[::1]/h",` + ev + `}`, "/url"},
		{`{"url":"https://[fd00::1]/h",` + ev + `}`, "/url"},
		{`{"url":"https://localhost/h",` + ev + `}`, "/url"},
		{`{"url":"https://user:pw@93.184.216.34/h",` + ev + `}`, "/url"},
		{`{"url":"https://user@93.184.216.34/h",` + ev + `}`, "/url"},
		{`{"url":"` + long + `",` + ev + `}`, "/url"},
		{`{"url":"` + publicHook + `"}`, "/events"},
		{`{"url":"` + publicHook + `","events":null}`, "/events"},
		{`{"url":"` + publicHook + `","events":"link.created"}`, "/events"},
		{`{"url":"` + publicHook + `","events":[]}`, "/events"},
		{`{"url":"` + publicHook + `","events":["link.created","link.created"]}`, "/events/1"},
		{`{"url":"` + publicHook + `","events":["link.created","link.exploded"]}`, "/events/1"},
		{`{"url":"` + publicHook + `","events":["ping"]}`, "/events/0"},
		{`{"url":"` + publicHook + `","events":[1]}`, "/events"},
		{`{"url":"` + publicHook + `",` + ev + `,"description":"` + strings.Repeat("d", 501) + `"}`, "/description"},
		{`{"url":"` + publicHook + `",` + ev + `,"secret":"whsec_mine"}`, "/secret"},
	}
	if len(long) != 2049 {
		t.Fatalf("long URL has %d bytes", len(long))
	}
	for _, c := range cases {
		p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/webhooks", f.token, c.body), 422, "validation-failed")
		if !hasPointer(p, c.pointer) {
			t.Errorf("%.80s: errors %v lack %s", c.body, p["errors"], c.pointer)
		}
	}
	// A PATCH is checked the same way.
	id := f.createHook(t, `{"url":"`+publicHook+`",`+ev+`}`)["id"].(string)
	for _, c := range []struct{ body, pointer string }{
		{`{"url":"https://127.0.0.1/h"}`, "/url"},
		{`{"url":"https://u:p@93.184.216.34/h"}`, "/url"},
		{`{"events":[]}`, "/events"},
		{`{"events":["scan.created","scan.created"]}`, "/events/1"},
		{`{"status":"paused"}`, "/status"},
		{`{"status":null}`, "/status"},
		{`{"id":"whk_x"}`, "/id"},
	} {
		p := testkit.Problem(t, f.srv.Do(t, "PATCH", "/api/v1/webhooks/"+id, f.token, c.body), 422, "validation-failed")
		if !hasPointer(p, c.pointer) {
			t.Errorf("PATCH %s: errors %v lack %s", c.body, p["errors"], c.pointer)
		}
	}
	testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/webhooks", f.token, `{"url":`), 400, "invalid-request")
	resp := f.srv.Do(t, "POST", "/api/v1/webhooks", f.token, "", "Content-Type", "text/plain")
	testkit.Problem(t, resp, 415, "unsupported-media-type")
	var n int
	if err := f.srv.Pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_subscriptions`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d subscriptions stored (%v), want only the valid one", n, err)
	}
}

// TestWebhooksOtherWorkspace404: another workspace's ids, and malformed
// ones, are 404 on every operation, and nothing changes.
func TestWebhooksOtherWorkspace404(t *testing.T) {
	t.Parallel()
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	defer rcv.Close()
	f := newHooksFixture(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	h := f.createHook(t, `{"url":"`+rcv.URL+`","events":["link.created"]}`)
	id := h["id"].(string)
	f.create(t, `{"target_url":"https://example.com/a"}`)
	dlv := waitDeliveries(t, f, id, 1, "succeeded")[0]["id"].(string)

	{
		tk := f.otherTk
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/api/v1/webhooks/" + id, ""},
			{"PATCH", "/api/v1/webhooks/" + id, `{"status":"disabled"}`},
			{"DELETE", "/api/v1/webhooks/" + id, ""},
			{"POST", "/api/v1/webhooks/" + id + "/rotate-secret", ""},
			{"GET", "/api/v1/webhooks/" + id + "/deliveries", ""},
			{"POST", "/api/v1/webhooks/" + id + "/deliveries/" + dlv + "/retry", ""},
		} {
			testkit.Problem(t, f.srv.Do(t, c.method, c.path, tk, c.body), 404, "not-found")
		}
	}
	for _, path := range []string{
		"/api/v1/webhooks/whk_nope", "/api/v1/webhooks/" + strings.Replace(id, "whk_", "lnk_", 1),
		"/api/v1/webhooks/" + id + "/deliveries/" + strings.Replace(dlv, "dlv_", "evt_", 1) + "/retry",
	} {
		method := "GET"
		if strings.HasSuffix(path, "/retry") {
			method = "POST"
		}
		testkit.Problem(t, f.srv.Do(t, method, path, f.token, ""), 404, "not-found")
	}
	// A delivery of another subscription of the same workspace is not found
	// under this one.
	id2 := f.createHook(t, `{"url":"`+rcv.URL+`","events":["scan.created"]}`)["id"].(string)
	testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/webhooks/"+id2+"/deliveries/"+dlv+"/retry", f.token, ""), 404, "not-found")

	got := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/webhooks/"+id, f.token, ""), 200)
	if got["status"] != "enabled" || got["updated_at"] != h["updated_at"] {
		t.Errorf("another workspace changed the subscription: %v", got)
	}
}

func TestWebhooksScopes403(t *testing.T) {
	t.Parallel()
	f := newHooksFixture(t)
	id := f.createHook(t, `{"url":"`+publicHook+`","events":["link.created"]}`)["id"].(string)
	linksOnly := f.srv.APIKey(t, f.tenant.WorkspaceID, "links:read", "links:write")
	readOnly := f.srv.APIKey(t, f.tenant.WorkspaceID, "webhooks:read")
	writeOnly := f.srv.APIKey(t, f.tenant.WorkspaceID, "webhooks:write")
	dlv := "dlv_06gzzsq0hc4w2aq9hm2jprnzk4"
	for _, c := range []struct{ method, path, body, token, scope string }{
		{"GET", "/api/v1/webhooks", "", linksOnly, "webhooks:read"},
		{"GET", "/api/v1/webhooks/" + id, "", writeOnly, "webhooks:read"},
		{"GET", "/api/v1/webhooks/" + id + "/deliveries", "", writeOnly, "webhooks:read"},
		{"POST", "/api/v1/webhooks", `{"url":"` + publicHook + `","events":["link.created"]}`, readOnly, "webhooks:write"},
		{"PATCH", "/api/v1/webhooks/" + id, `{"status":"disabled"}`, readOnly, "webhooks:write"},
		{"DELETE", "/api/v1/webhooks/" + id, "", readOnly, "webhooks:write"},
		{"POST", "/api/v1/webhooks/" + id + "/rotate-secret", "", readOnly, "webhooks:write"},
		{"POST", "/api/v1/webhooks/" + id + "/deliveries/" + dlv + "/retry", "", linksOnly, "webhooks:write"},
	} {
		resp := f.srv.Do(t, c.method, c.path, c.token, c.body)
		want := `Bearer error="insufficient_scope", scope="` + c.scope + `"`
		if got := resp.Header.Get("WWW-Authenticate"); got != want {
			t.Errorf("%s %s: WWW-Authenticate %q, want %q", c.method, c.path, got, want)
		}
		p := testkit.Problem(t, resp, 403, "insufficient-scope")
		if p["required_scope"] != c.scope {
			t.Errorf("%s %s: required_scope %v", c.method, c.path, p["required_scope"])
		}
	}
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/webhooks", "", ""), 401, "unauthorized")
	if got := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/webhooks/"+id, readOnly, ""), 200); got["status"] != "enabled" {
		t.Errorf("after refused writes: %v", got)
	}
}

// TestCreateWebhookIdempotent: a replayed create returns the same body,
// secret included, and creates nothing.
func TestCreateWebhookIdempotent(t *testing.T) {
	t.Parallel()
	f := newHooksFixture(t)
	body := `{"url":"` + publicHook + `","events":["link.created"]}`
	post := func(key, body string) (*http.Response, string) {
		resp := f.srv.Do(t, "POST", "/api/v1/webhooks", f.token, body, "Idempotency-Key", key)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	r1, b1 := post("hook-1", body)
	r2, b2 := post("hook-1", body)
	if r1.StatusCode != 201 || r2.StatusCode != 201 || b1 != b2 || r1.Header.Get("Location") != r2.Header.Get("Location") {
		t.Fatalf("replay differs:\n%d %s\n%d %s", r1.StatusCode, b1, r2.StatusCode, b2)
	}
	if r2.Header.Get("Idempotent-Replayed") != "true" || !strings.Contains(b2, `"secret":"whsec_`) {
		t.Errorf("replay: header %q, body %s", r2.Header.Get("Idempotent-Replayed"), b2)
	}
	testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/webhooks", f.token, `{"url":"`+publicHook+`","events":["scan.created"]}`, "Idempotency-Key", "hook-1"), 422, "idempotency-key-reused")
	var n int
	if err := f.srv.Pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_subscriptions`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d subscriptions after a replay (%v)", n, err)
	}
}

// waitDeliveries polls the delivery list until it holds n deliveries, the
// newest with status, and returns them.
func waitDeliveries(t *testing.T, f hooksFixture, id string, n int, status string) []map[string]any {
	t.Helper()
	var ds []map[string]any
	wait.Until(t, 20*time.Second, func() (bool, string) {
		page := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/webhooks/"+id+"/deliveries", f.token, ""), 200)
		ds = nil
		for _, d := range page["data"].([]any) {
			ds = append(ds, d.(map[string]any))
		}
		return len(ds) == n && ds[0]["status"] == status, fmt.Sprintf("deliveries %v: want %d, the newest %s", ds, n, status)
	})
	return ds
}

// TestWebhookDeliveriesAndRetry: a real receiver, a real River worker: the
// delivery log lists the attempt; a retry is 202 with a pending attempt 2
// that the worker completes; a disabled subscription's retry is 409.
func TestWebhookDeliveriesAndRetry(t *testing.T) {
	t.Parallel()
	got := make(chan http.Header, 10)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.WriteHeader(204)
	}))
	defer rcv.Close()
	f := newHooksFixture(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	// The server allows http and loopback receivers here.
	h := f.createHook(t, `{"url":"`+rcv.URL+`/hook","events":["link.created"]}`)
	id := h["id"].(string)
	f.create(t, `{"target_url":"https://example.com/a"}`)
	ds := waitDeliveries(t, f, id, 1, "succeeded")
	d := ds[0]
	if !strings.HasPrefix(d["id"].(string), "dlv_") || d["webhook_id"] != id || d["event_type"] != "link.created" ||
		d["attempt"] != float64(1) || d["response_status"] != float64(204) || d["error"] != nil || d["next_attempt_at"] != nil {
		t.Errorf("delivery %v", d)
	}
	first := <-got
	if first.Get(webhook.HeaderEventID) != d["event_id"] {
		t.Errorf("Service-Event-Id %q, delivery event %v", first.Get(webhook.HeaderEventID), d["event_id"])
	}

	resp := f.srv.Do(t, "POST", "/api/v1/webhooks/"+id+"/deliveries/"+d["id"].(string)+"/retry", f.token, "", "Idempotency-Key", "retry-1")
	pending := testkit.JSON(t, resp, 202)
	if pending["status"] != "pending" || pending["attempt"] != float64(2) || pending["event_id"] != d["event_id"] || pending["id"] == d["id"] {
		t.Errorf("retry answer %v", pending)
	}
	ds = waitDeliveries(t, f, id, 2, "succeeded")
	if ds[0]["id"] != pending["id"] || ds[0]["attempt"] != float64(2) {
		t.Errorf("after the retry %v", ds)
	}
	if again := <-got; again.Get(webhook.HeaderAttempt) != "2" || again.Get(webhook.HeaderEventID) != d["event_id"] {
		t.Errorf("retry sent attempt %q of %q", again.Get(webhook.HeaderAttempt), again.Get(webhook.HeaderEventID))
	}
	// The same key again: the stored 202, no third attempt.
	replay := f.srv.Do(t, "POST", "/api/v1/webhooks/"+id+"/deliveries/"+d["id"].(string)+"/retry", f.token, "", "Idempotency-Key", "retry-1")
	if r := testkit.JSON(t, replay, 202); r["id"] != pending["id"] || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replayed retry %v", r)
	}

	page := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/webhooks/"+id+"/deliveries?limit=1", f.token, ""), 200)
	if page["has_more"] != true || len(page["data"].([]any)) != 1 {
		t.Fatalf("first page %v", page)
	}
	next := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/webhooks/"+id+"/deliveries?limit=1&cursor="+url.QueryEscape(page["next_cursor"].(string)), f.token, ""), 200)
	if data := next["data"].([]any); next["has_more"] != false || len(data) != 1 || data[0].(map[string]any)["id"] != d["id"] {
		t.Errorf("second page %v", next)
	}

	testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/webhooks/"+id, f.token, `{"status":"disabled"}`), 200)
	p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/webhooks/"+id+"/deliveries/"+d["id"].(string)+"/retry", f.token, ""), 409, "conflict")
	if !strings.Contains(p["detail"].(string), "disabled") {
		t.Errorf("409 detail %v", p["detail"])
	}
	testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/webhooks/"+id, f.token, `{"status":"enabled"}`), 200)
	testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/webhooks/"+id+"/deliveries/"+d["id"].(string)+"/retry", f.token, ""), 202)
	waitDeliveries(t, f, id, 3, "succeeded")
}

// TestWebhookDescriptionUnstorable422: a description PostgreSQL cannot
// store (NUL) is a 422 at /description on create and on PATCH, and
// changes nothing. Both answered 500 before the description was parsed
// as text (issue 32).
func TestWebhookDescriptionUnstorable422(t *testing.T) {
	t.Parallel()
	f := newHooksFixture(t)
	ev := `"events":["link.created"]`
	id := f.createHook(t, `{"url":"`+publicHook+`",`+ev+`,"description":"Orders"}`)["id"].(string)
	for _, d := range []string{`"\u0000"`, `"a\u0000b"`, `"tab\there"`, `"line\nbreak"`} {
		for _, req := range []struct{ method, path, body string }{
			{"POST", "/api/v1/webhooks", `{"url":"` + publicHook + `",` + ev + `,"description":` + d + `}`},
			{"PATCH", "/api/v1/webhooks/" + id, `{"description":` + d + `}`},
		} {
			p := testkit.Problem(t, f.srv.Do(t, req.method, req.path, f.token, req.body), 422, "validation-failed")
			if !hasPointer(p, "/description") || p["detail"] != "description must not contain control characters such as NUL, tabs or line breaks" {
				t.Errorf("%s %s: %v", req.method, d, p)
			}
		}
	}
	h := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/webhooks/"+id, f.token, ""), 200)
	var n int
	if err := f.srv.Pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_subscriptions`).Scan(&n); err != nil || n != 1 || h["description"] != "Orders" {
		t.Errorf("%d subscriptions (%v), description %v: the refused requests changed something", n, err, h["description"])
	}
}
