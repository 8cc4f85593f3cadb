package metrics

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// series scrapes the handler and returns the sample lines of one metric
// (name{labels} value), as a Prometheus server would see them.
func series(t *testing.T, m *Metrics, name string) []string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	var out []string
	for line := range strings.Lines(rec.Body.String()) {
		if strings.HasPrefix(line, name+"{") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

func TestLabelsStayBounded(t *testing.T) {
	t.Parallel()
	m := New()
	for i := range 2000 {
		m.ObserveHTTP("", fmt.Sprintf("M%d", i), 404, time.Millisecond)
		m.ObserveHTTP("/{code}", "get", 600+i, time.Millisecond) // lower-case: not GET
	}
	m.ObserveHTTP("/healthz", "GET", 200, time.Millisecond)

	got := map[string]bool{}
	for _, line := range series(t, m, "linkqr_http_requests_total") {
		got[line] = true
	}
	want := map[string]bool{
		`linkqr_http_requests_total{code="404",method="other",route="unmatched"} 2000`: true,
		`linkqr_http_requests_total{code="other",method="other",route="/{code}"} 2000`: true,
		`linkqr_http_requests_total{code="200",method="GET",route="/healthz"} 1`:       true,
	}
	if len(got) != len(want) {
		t.Fatalf("series %v, want %v", got, want)
	}
	for k := range want {
		if !got[k] {
			t.Errorf("missing series %q in %v", k, got)
		}
	}
	if n := len(series(t, m, "linkqr_http_request_duration_seconds_count")); n != 3 {
		t.Errorf("%d latency series, want 3", n)
	}
}

func TestMethodAndCodeLabels(t *testing.T) {
	t.Parallel()
	for method, want := range map[string]string{
		"GET": "GET", "HEAD": "HEAD", "POST": "POST", "PUT": "PUT", "PATCH": "PATCH",
		"DELETE": "DELETE", "OPTIONS": "OPTIONS", "CONNECT": "CONNECT", "TRACE": "TRACE",
		"get": "other", "PROPFIND": "other", "": "other", "X-ABCDEFGHIJKLMNOP": "other",
	} {
		if got := MethodLabel(method); got != want {
			t.Errorf("MethodLabel(%q) = %q, want %q", method, got, want)
		}
	}
	for code, want := range map[int]string{200: "200", 302: "302", 418: "418", 499: "other", 599: "other", 0: "other", 1000: "other"} {
		if got := CodeLabel(code); got != want {
			t.Errorf("CodeLabel(%d) = %q, want %q", code, got, want)
		}
	}
}
