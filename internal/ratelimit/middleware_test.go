package ratelimit_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/ratelimit"
)

// limited serves next behind the middleware with a fake clock; the budget
// key and limit come from the X-Key and X-Limit request headers.
func limited(clk *clock, next http.Handler) http.Handler {
	m := &ratelimit.Middleware{
		Limiter:  ratelimit.NewLocal(clk.Now),
		Problems: problem.Writer{BaseURL: "https://linkqr.example"},
		Log:      slog.New(slog.DiscardHandler),
		Subject: func(r *http.Request) (string, int, bool) {
			key := r.Header.Get("X-Key")
			if key == "" {
				return "", 0, false
			}
			var n int
			_ = json.Unmarshal([]byte(r.Header.Get("X-Limit")), &n)
			return key, n, true
		},
	}
	return m.Handler(next)
}

func call(h http.Handler, key, limit string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/api/v1/workspace", nil)
	if key != "" {
		req.Header.Set("X-Key", key)
		req.Header.Set("X-Limit", limit)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func headers(rec *httptest.ResponseRecorder) string {
	h := rec.Header()
	return h.Get("RateLimit-Limit") + "/" + h.Get("RateLimit-Remaining") + "/" + h.Get("RateLimit-Reset")
}

func TestMiddlewareHeadersCountDownThen429(t *testing.T) {
	t.Parallel()
	clk := newClock()
	calls := 0
	h := limited(clk, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.WriteHeader(http.StatusNoContent)
	}))
	// 3 a minute: one request every 20 s.
	for i, want := range []string{"3/2/20", "3/1/40", "3/0/60"} {
		rec := call(h, "k", "3")
		if rec.Code != http.StatusNoContent || headers(rec) != want || rec.Header().Get("Retry-After") != "" {
			t.Fatalf("request %d: %d %s (Retry-After %q), want 204 %s", i+1, rec.Code, headers(rec), rec.Header().Get("Retry-After"), want)
		}
	}
	clk.Advance(500 * time.Millisecond)
	rec := call(h, "k", "3")
	if rec.Code != http.StatusTooManyRequests || headers(rec) != "3/0/60" || rec.Header().Get("Retry-After") != "20" {
		t.Fatalf("request 4: %d %s Retry-After %q, want 429 3/0/60 Retry-After 20 (19.5 s rounded up)", rec.Code, headers(rec), rec.Header().Get("Retry-After"))
	}
	if calls != 3 {
		t.Fatalf("the handler ran %d times, want 3", calls)
	}
	var p map[string]any
	body, _ := io.ReadAll(rec.Body)
	if err := json.Unmarshal(body, &p); err != nil || rec.Header().Get("Content-Type") != problem.ContentType ||
		p["type"] != "https://linkqr.example/problems/rate-limited" || p["status"] != float64(429) ||
		!strings.Contains(p["detail"].(string), "3 requests per minute") || !strings.Contains(p["detail"].(string), "20 seconds") {
		t.Fatalf("429 body %s", body)
	}

	// Just under a second left: Retry-After is still at least 1.
	clk.Advance(19*time.Second + 100*time.Millisecond)
	if rec := call(h, "k", "3"); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("0.4 s before the refill: %d Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	clk.Advance(400 * time.Millisecond)
	if rec := call(h, "k", "3"); rec.Code != http.StatusNoContent || headers(rec) != "3/0/60" {
		t.Fatalf("after the refill: %d %s", rec.Code, headers(rec))
	}
}

// Errors written by the handler keep the headers set before it ran.
func TestMiddlewareHeadersOnHandlerErrors(t *testing.T) {
	t.Parallel()
	h := limited(newClock(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		problem.Writer{}.Write(w, r, problem.New(problem.InsufficientScope, "no"))
	}))
	if rec := call(h, "k", "10"); rec.Code != http.StatusForbidden || headers(rec) != "10/9/6" {
		t.Fatalf("403: %d %s", rec.Code, headers(rec))
	}
}

func TestMiddlewareWithoutCredentialIs500(t *testing.T) {
	t.Parallel()
	h := limited(newClock(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the handler ran without a credential")
	}))
	if rec := call(h, "", ""); rec.Code != http.StatusInternalServerError || rec.Header().Get("RateLimit-Limit") != "" {
		t.Fatalf("no credential: %d %s", rec.Code, headers(rec))
	}
}
