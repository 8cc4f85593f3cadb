package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/linkqr/linkqr/internal/api"
	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/webhook"
)

// received is one request a test receiver got.
type received struct {
	header http.Header
	body   []byte
}

// receiver is a local webhook endpoint that answers 204 and hands every
// request to the test.
func receiver(t *testing.T) (*httptest.Server, chan received) {
	t.Helper()
	got := make(chan received, 20)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- received{header: r.Header.Clone(), body: b}
		w.WriteHeader(204)
	}))
	t.Cleanup(rcv.Close)
	return rcv, got
}

func next(t *testing.T, got chan received, what string) received {
	t.Helper()
	select {
	case r := <-got:
		return r
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s delivered within 30 s", what)
		return received{}
	}
}

// eventSchema is the request body schema of the document's webhook for an
// event type (the webhooks section of openapi.yaml).
func eventSchema(t *testing.T, typ string) *openapi3.Schema {
	t.Helper()
	item := api.Spec().Webhooks[typ]
	if item == nil || item.Post == nil || item.Post.RequestBody == nil {
		t.Fatalf("the document has no webhook %q", typ)
	}
	mt := item.Post.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		t.Fatalf("webhook %q has no application/json body", typ)
	}
	return mt.Schema.Value
}

// checkDelivery verifies a delivery's signature with secret, and its body
// against the document's schema for its type; it returns the envelope.
func checkDelivery(t *testing.T, r received, secret string) map[string]any {
	t.Helper()
	if err := webhook.Verify(r.body, r.header.Get(webhook.HeaderSignature), secret, 5*time.Minute, time.Now()); err != nil {
		t.Errorf("signature: %v", err)
	}
	var env map[string]any
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
	typ, _ := env["type"].(string)
	if err := eventSchema(t, typ).VisitJSON(env, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors()); err != nil {
		t.Errorf("%s body does not match the document:\n%v\n%s", typ, err, r.body)
	}
	if got := r.header.Get(webhook.HeaderEventID); got != env["id"] {
		t.Errorf("Service-Event-Id %q, body id %v", got, env["id"])
	}
	return env
}

// TestWebhooksDocumentEveryEvent: the document's webhooks section has an
// entry for every subscribable event type and for ping, and nothing else.
func TestWebhooksDocumentEveryEvent(t *testing.T) {
	t.Parallel()
	want := []string{string(event.Ping)}
	for _, typ := range event.Types {
		want = append(want, string(typ))
	}
	var got []string
	for name := range api.Spec().Webhooks {
		got = append(got, name)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("webhooks %v, want %v", got, want)
	}
}

// TestWebhookEventsMatchDocument: real deliveries of every event type are
// signed and match the schemas of the document's webhooks section (with
// previous_attributes on link.updated).
func TestWebhookEventsMatchDocument(t *testing.T) {
	t.Parallel()
	rcv, got := receiver(t)
	f := newHooksFixture(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	h := f.createHook(t, `{"url":"`+rcv.URL+`","events":["link.created","link.updated","link.deleted","scan.created"]}`)
	secret := h["secret"].(string)

	link := f.create(t, `{"target_url":"https://example.com/a","title":"Before"}`)
	id := link["id"].(string)
	testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/links/"+id, f.token, `{"title":null,"status":"paused","target_url":"https://example.com/b"}`), 200)
	testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/links/"+id, f.token, `{"status":"active"}`), 200)
	scanOnce(t, link["short_url"].(string))
	del := f.srv.Do(t, "DELETE", "/api/v1/links/"+id, f.token, "")
	del.Body.Close()

	seen := map[string][]map[string]any{}
	for i := range 5 {
		env := checkDelivery(t, next(t, got, fmt.Sprintf("event %d (have %v)", i+1, seen)), secret)
		seen[env["type"].(string)] = append(seen[env["type"].(string)], env)
	}
	if len(seen["link.created"]) != 1 || len(seen["link.updated"]) != 2 || len(seen["scan.created"]) != 1 || len(seen["link.deleted"]) != 1 {
		t.Fatalf("received %v", seen)
	}
	var prev []string
	for _, u := range seen["link.updated"] {
		b, _ := json.Marshal(u["data"].(map[string]any)["previous_attributes"])
		prev = append(prev, string(b))
	}
	slices.Sort(prev)
	if want := []string{`{"status":"active","target_url":"https://example.com/a","title":"Before"}`, `{"status":"paused"}`}; !slices.Equal(prev, want) {
		t.Errorf("previous_attributes %v, want %v", prev, want)
	}
}

// scanOnce opens a short URL as a phone would, without following the
// redirect.
func scanOnce(t *testing.T, shortURL string) {
	t.Helper()
	req, _ := http.NewRequest("GET", shortURL, nil)
	req.Header.Set("User-Agent", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1")
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil || resp.StatusCode != 302 {
		t.Fatalf("redirect: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestWebhookTestEvent: POST /webhooks/{id}/test answers 202 with a pending
// ping delivery, delivers a signed ping (matching the document) to that
// subscription only, is idempotent, and is refused for a disabled
// subscription (409), another workspace's (404) and without webhooks:write.
func TestWebhookTestEvent(t *testing.T) {
	t.Parallel()
	rcv, got := receiver(t)
	f := newHooksFixture(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	h := f.createHook(t, `{"url":"`+rcv.URL+`/one","events":["link.deleted"]}`)
	other := f.createHook(t, `{"url":"`+rcv.URL+`/two","events":["link.deleted"]}`)
	id := h["id"].(string)

	resp := f.srv.Do(t, "POST", "/api/v1/webhooks/"+id+"/test", f.token, "", "Idempotency-Key", "ping-1")
	d := testkit.JSON(t, resp, 202)
	if d["object"] != "delivery" || d["event_type"] != "ping" || d["status"] != "pending" || d["attempt"] != float64(1) || d["webhook_id"] != id {
		t.Errorf("test answer %v", d)
	}
	r := next(t, got, "ping")
	env := checkDelivery(t, r, h["secret"].(string))
	if env["type"] != "ping" || env["id"] != d["event_id"] || env["data"].(map[string]any)["webhook"].(map[string]any)["id"] != id {
		t.Errorf("ping %s", r.body)
	}
	ds := waitDeliveries(t, f, id, 1, "succeeded")
	if ds[0]["id"] != d["id"] {
		t.Errorf("deliveries %v, answered %v", ds, d)
	}

	replay := f.srv.Do(t, "POST", "/api/v1/webhooks/"+id+"/test", f.token, "", "Idempotency-Key", "ping-1")
	if again := testkit.JSON(t, replay, 202); again["id"] != d["id"] || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay %v", again)
	}
	testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/webhooks/"+id+"/test", f.token, "{}"), 202)
	checkDelivery(t, next(t, got, "second ping"), h["secret"].(string))
	waitDeliveries(t, f, id, 2, "succeeded")
	if page := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/webhooks/"+other["id"].(string)+"/deliveries", f.token, ""), 200); len(page["data"].([]any)) != 0 {
		t.Errorf("the other subscription got %v", page["data"])
	}

	testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/webhooks/"+id+"/test", f.otherTk, ""), 404, "not-found")
	testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/webhooks/whk_nope/test", f.token, ""), 404, "not-found")
	testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/webhooks/"+id+"/test", f.token, `{"url":"x"}`), 422, "validation-failed")
	testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/webhooks/"+id+"/test?x=1", f.token, ""), 422, "validation-failed")
	readOnly := f.srv.APIKey(t, f.tenant.WorkspaceID, "webhooks:read")
	if p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/webhooks/"+id+"/test", readOnly, ""), 403, "insufficient-scope"); p["required_scope"] != "webhooks:write" {
		t.Errorf("403 %v", p)
	}
	testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/webhooks/"+id, f.token, `{"status":"disabled"}`), 200)
	p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/webhooks/"+id+"/test", f.token, ""), 409, "conflict")
	if !strings.Contains(p["detail"].(string), "disabled") {
		t.Errorf("409 %v", p)
	}
	select {
	case extra := <-got:
		t.Errorf("an unexpected delivery: %s", extra.body)
	default:
	}
}
