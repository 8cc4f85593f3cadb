package testkit_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/linkqr/linkqr/internal/testkit"
)

// recorder is a testing.TB that records Errorf instead of failing, so the
// validator's own failures can be asserted on.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Helper() {}

func (r *recorder) errors() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errs, "\n")
}

const (
	wsID   = "ws_06gzzspxy9rx1cvj5mryq7mtgm"
	linkID = "lnk_06gzzspxy9ry5b4nj0v9yx7aq0"
	rid    = "req_test1"
)

func link(mod func(string) string) string {
	s := `{"object":"link","id":"` + linkID + `","workspace_id":"` + wsID + `","code":"Ab3xY9q",` +
		`"domain":null,"short_url":"http://127.0.0.1:9/Ab3xY9q","target_url":"https://example.com/menu","title":null,` +
		`"status":"active","expires_at":null,"scan_count":0,"last_scanned_at":null,"tags":[],"rules":null,"split":null,"password_protected":false,"max_scans":null,"utm_source":null,"utm_medium":null,"utm_campaign":null,"utm_term":null,"utm_content":null,` +
		`"created_at":"2026-11-21T20:00:00Z","updated_at":"2026-11-21T20:00:00.123456Z"}`
	if mod != nil {
		s = mod(s)
	}
	return s
}

func problemBody(slug, title string, status int, extra string) string {
	return fmt.Sprintf(`{"type":"http://127.0.0.1:9/problems/%s","title":%q,"status":%d,"detail":"d","instance":"/api/v1/x","request_id":%q%s}`,
		slug, title, status, rid, extra)
}

// TestValidatingTransport runs canned responses through the validator and
// checks which ones it reports, and with what.
func TestValidatingTransport(t *testing.T) {
	t.Parallel()
	jsonCT := map[string]string{"Content-Type": "application/json"}
	problemCT := map[string]string{"Content-Type": "application/problem+json"}
	with := func(base map[string]string, kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	location := "http://127.0.0.1:9/api/v1/links/" + linkID
	qrHeaders := map[string]string{
		"Content-Type": "image/png", "ETag": `"qr1-abc"`, "Cache-Control": "private, max-age=86400",
		"Content-Disposition": `inline; filename="Ab3xY9q.png"`,
	}

	cases := []struct {
		name         string
		method, path string
		status       int
		header       map[string]string
		body         string
		noRequestID  bool
		want         string // "" = valid; else a substring of the report
	}{
		{"workspace", "GET", "/api/v1/workspace", 200, jsonCT,
			`{"object":"workspace","id":"` + wsID + `","name":"Acme","timezone":"UTC","scopes":["links:read"]}`, false, ""},
		{"workspace missing field", "GET", "/api/v1/workspace", 200, jsonCT,
			`{"object":"workspace","id":"` + wsID + `","timezone":"UTC","scopes":[]}`, false, "name"},
		{"workspace wrong type", "GET", "/api/v1/workspace", 200, jsonCT,
			`{"object":"workspace","id":"` + wsID + `","name":"Acme","timezone":"UTC","scopes":"links:read"}`, false, "scopes"},
		{"workspace undocumented field", "GET", "/api/v1/workspace", 200, jsonCT,
			`{"object":"workspace","id":"` + wsID + `","name":"Acme","timezone":"UTC","scopes":[],"plan":"free"}`, false, "plan"},
		{"workspace bad id", "GET", "/api/v1/workspace", 200, jsonCT,
			`{"object":"workspace","id":"ws_123","name":"Acme","scopes":[]}`, false, "id"},
		{"undocumented status", "GET", "/api/v1/workspace", 418, jsonCT, `{}`, false, "status 418 is not documented for getWorkspace"},
		{"wrong content type", "GET", "/api/v1/workspace", 200, map[string]string{"Content-Type": "text/plain"}, `hello`, false, "text/plain"},
		{"no request id", "GET", "/api/v1/workspace", 200, jsonCT,
			`{"object":"workspace","id":"` + wsID + `","name":"Acme","timezone":"UTC","scopes":[]}`, true, "X-Request-Id"},
		{"401", "GET", "/api/v1/workspace", 401, with(problemCT, "WWW-Authenticate", `Bearer realm="linkqr"`),
			problemBody("unauthorized", "Unauthorized", 401, ""), false, ""},
		{"401 without challenge", "GET", "/api/v1/workspace", 401, problemCT,
			problemBody("unauthorized", "Unauthorized", 401, ""), false, "WWW-Authenticate"},
		{"401 as JSON", "GET", "/api/v1/workspace", 401, with(jsonCT, "WWW-Authenticate", `Bearer realm="linkqr"`),
			problemBody("unauthorized", "Unauthorized", 401, ""), false, "application/json"},
		{"403 insufficient scope", "GET", "/api/v1/links", 403,
			with(problemCT, "WWW-Authenticate", `Bearer error="insufficient_scope", scope="links:read"`),
			problemBody("insufficient-scope", "Insufficient scope", 403, `,"required_scope":"links:read"`), false, ""},
		{"problem request_id mismatch", "GET", "/api/v1/links", 403, problemCT,
			strings.Replace(problemBody("ip-not-allowed", "IP address not allowed", 403, ""), rid, "req_other", 1), false, "request_id"},
		{"replayed problem keeps the original request_id", "POST", "/api/v1/links", 422, with(problemCT, "Idempotent-Replayed", "true"),
			strings.Replace(problemBody("validation-failed", "Validation failed", 422, ""), rid, "req_original", 1), false, ""},
		{"problem status mismatch", "GET", "/api/v1/links", 403, problemCT,
			problemBody("ip-not-allowed", "IP address not allowed", 401, ""), false, "problem status 401, HTTP status 403"},
		{"problem slug of another status", "GET", "/api/v1/links", 403, problemCT,
			problemBody("not-found", "Not found", 403, ""), false, "not-found does not have status 403"},
		{"problem unknown slug", "GET", "/api/v1/links", 403, problemCT,
			problemBody("no-such-problem", "No such problem", 403, ""), false, "type"},
		{"problem without detail", "GET", "/api/v1/links", 403, problemCT,
			`{"type":"http://x/problems/ip-not-allowed","title":"t","status":403,"instance":"/","request_id":"` + rid + `"}`, false, "detail"},
		{"validation problem", "POST", "/api/v1/links", 422, problemCT,
			problemBody("validation-failed", "Validation failed", 422, `,"errors":[{"pointer":"/target_url","detail":"bad"}]`), false, ""},
		{"validation problem bad errors", "POST", "/api/v1/links", 422, problemCT,
			problemBody("validation-failed", "Validation failed", 422, `,"errors":[{"field":"target_url"}]`), false, "errors"},
		{"429 without Retry-After", "GET", "/api/v1/links", 429, problemCT,
			problemBody("rate-limited", "Rate limited", 429, ""), false, "Retry-After"},
		{"429", "GET", "/api/v1/links", 429, with(problemCT, "Retry-After", "12", "RateLimit-Remaining", "0"),
			problemBody("rate-limited", "Rate limited", 429, ""), false, ""},
		{"429 without rate-limit headers", "GET", "/api/v1/links", 429, with(problemCT, "Retry-After", "12", "RateLimit-Reset", ""),
			problemBody("rate-limited", "Rate limited", 429, ""), false, "RateLimit-Reset"},
		{"success without rate-limit headers", "GET", "/api/v1/workspace", 200, with(jsonCT, "RateLimit-Limit", ""),
			`{"object":"workspace","id":"` + wsID + `","name":"Acme","timezone":"UTC","scopes":["links:read"]}`, false, "RateLimit-Limit"},
		{"404 without rate-limit headers (not authenticated)", "GET", "/api/v1/links/" + linkID, 404,
			with(problemCT, "RateLimit-Limit", "", "RateLimit-Remaining", "", "RateLimit-Reset", ""),
			problemBody("not-found", "Not found", 404, ""), false, ""},
		{"created", "POST", "/api/v1/links", 201, with(jsonCT, "Location", location), link(nil), false, ""},
		{"created without Location", "POST", "/api/v1/links", 201, jsonCT, link(nil), false, "Location"},
		{"created, nullable field omitted", "POST", "/api/v1/links", 201, with(jsonCT, "Location", location),
			link(func(s string) string { return strings.Replace(s, `"title":null,`, "", 1) }), false, "title"},
		{"created, timestamp not in UTC", "POST", "/api/v1/links", 201, with(jsonCT, "Location", location),
			link(func(s string) string { return strings.Replace(s, "20:00:00Z", "21:00:00+01:00", 1) }), false, "created_at"},
		{"created, bad status", "POST", "/api/v1/links", 201, with(jsonCT, "Location", location),
			link(func(s string) string { return strings.Replace(s, `"active"`, `"deleted"`, 1) }), false, "status"},
		{"get link", "GET", "/api/v1/links/" + linkID, 200, jsonCT, link(nil), false, ""},
		{"list", "GET", "/api/v1/links?limit=1", 200, jsonCT,
			`{"object":"list","data":[` + link(nil) + `],"has_more":true,"next_cursor":"abc"}`, false, ""},
		{"list, next_cursor omitted", "GET", "/api/v1/links", 200, jsonCT,
			`{"object":"list","data":[],"has_more":false}`, false, "next_cursor"},
		{"deleted", "DELETE", "/api/v1/links/" + linkID, 204, nil, ``, false, ""},
		{"qr", "GET", "/api/v1/links/" + linkID + "/qr", 200, qrHeaders, "\x89PNG\r\n\x1a\n", false, ""},
		{"qr without ETag", "GET", "/api/v1/links/" + linkID + "/qr", 200, with(qrHeaders, "ETag", ""), "\x89PNG", false, "ETag"},
		{"qr not modified", "GET", "/api/v1/links/" + linkID + "/qr", 304, map[string]string{"ETag": `"qr1-abc"`}, ``, false, ""},
		{"link not modified", "GET", "/api/v1/links/" + linkID, 304, nil, ``, false, "status 304 is not documented for getLink"},
		{"unknown path, 404 problem", "GET", "/api/v1/nope", 404, problemCT,
			problemBody("not-found", "Not found", 404, ""), false, ""},
		{"unknown path answered", "GET", "/api/v1/not-a-route", 200, jsonCT, `{}`, false, "path is not documented"},
		{"unknown method, 405 problem", "DELETE", "/api/v1/workspace", 405, with(problemCT, "Allow", "GET, PATCH"),
			problemBody("method-not-allowed", "Method not allowed", 405, ""), false, ""},
		{"405 with a wrong Allow", "PUT", "/api/v1/links/" + linkID, 405, with(problemCT, "Allow", "GET, PATCH"),
			problemBody("method-not-allowed", "Method not allowed", 405, ""), false, "DELETE"},
		{"unknown method answered", "PUT", "/api/v1/links/" + linkID, 200, jsonCT, link(nil), false, "PUT is not documented"},
		{"outside the API", "GET", "/healthz", 200, map[string]string{"Content-Type": "text/plain"}, `ok`, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !tc.noRequestID {
					w.Header().Set("X-Request-Id", rid)
				}
				// What the rate limiter sends on every authenticated response;
				// an empty value in tc.header removes a header.
				w.Header().Set("RateLimit-Limit", "600")
				w.Header().Set("RateLimit-Remaining", "599")
				w.Header().Set("RateLimit-Reset", "1")
				for k, v := range tc.header {
					if v != "" {
						w.Header().Set(k, v)
					} else {
						w.Header().Del(k)
					}
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			rec := &recorder{TB: t}
			client := &http.Client{Transport: testkit.ValidatingTransport(rec, nil)}
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != tc.body {
				t.Errorf("the caller got body %q, want %q", body, tc.body)
			}
			got := rec.errors()
			switch {
			case tc.want == "" && got != "":
				t.Errorf("valid response reported:\n%s", got)
			case tc.want != "" && got == "":
				t.Errorf("invalid response not reported (want %q)", tc.want)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("report lacks %q:\n%s", tc.want, got)
			}
			if got != "" && !strings.Contains(got, tc.method+" "+tc.path) {
				t.Errorf("report does not name the request:\n%s", got)
			}
		})
	}
}

// TestValidateResponseBodyWhereNoneIsDocumented: net/http refuses to send a
// body with 204, so this drift can only show in handler-level tests, which
// call ValidateResponse directly.
func TestValidateResponseBodyWhereNoneIsDocumented(t *testing.T) {
	t.Parallel()
	req := httptest.NewRequest("DELETE", "/api/v1/links/"+linkID, nil)
	h := http.Header{"X-Request-Id": {rid}, "Content-Type": {"application/json"}}
	err := testkit.ValidateResponse(req, 204, h, []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), "documents no body for 204") {
		t.Errorf("got %v", err)
	}
	valid := http.Header{"X-Request-Id": {rid}, "Ratelimit-Limit": {"600"}, "Ratelimit-Remaining": {"599"}, "Ratelimit-Reset": {"1"}}
	if err := testkit.ValidateResponse(req, 204, valid, nil); err != nil {
		t.Errorf("valid 204: %v", err)
	}
}
