package app_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/api"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		resp := testkit.Get(t, srv.URL+path, nil)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != `{"status":"ok"}` {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
		if resp.Header.Get("X-Request-Id") == "" {
			t.Errorf("%s: no X-Request-Id", path)
		}
	}
}

func TestReadinessFailsWhenDatabaseIsGone(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	// Terminate the pool's connections and forbid new ones: the database is
	// as unreachable as a stopped server, while this test's server lives on.
	var name string
	if err := srv.Pool.QueryRow(t.Context(), "SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	admin := testkit.DB(t)
	if _, err := admin.Exec(t.Context(), "ALTER DATABASE "+name+" WITH ALLOW_CONNECTIONS false"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(t.Context(), "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(t.Context(), "ALTER DATABASE "+name+" WITH ALLOW_CONNECTIONS true")
	})
	p := testkit.Problem(t, testkit.Get(t, srv.URL+"/readyz", nil), 503, "unavailable")
	if p["detail"] != "the database is not reachable" {
		t.Errorf("detail %v", p["detail"])
	}
	resp := testkit.Get(t, srv.URL+"/healthz", nil)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("healthz must stay 200 while the process is up, got %d", resp.StatusCode)
	}
}

func TestUnknownAPIRouteIsProblem(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	for _, path := range []string{"/api/nope", "/api/v1/nope", "/api/v2/links"} {
		p := testkit.Problem(t, testkit.Get(t, srv.URL+path, http.Header{"X-Request-Id": {"trace-1"}}), 404, "not-found")
		if p["instance"] != path || p["request_id"] != "trace-1" {
			t.Errorf("%s: %v", path, p)
		}
	}
}

func TestMethodNotAllowedListsAllow(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	req, _ := http.NewRequest(http.MethodDelete, srv.URL+"/api/v1/workspace", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if allow := resp.Header.Get("Allow"); allow != "GET, PATCH" {
		t.Errorf("Allow = %q, want GET, PATCH", allow)
	}
	testkit.Problem(t, resp, 405, "method-not-allowed")
}

func TestPanicBecomesProblemAndProcessLives(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	srv.App.Router().Get("/api/v1/test-panic", func(http.ResponseWriter, *http.Request) { panic("boom") })
	p := testkit.Problem(t, testkit.Get(t, srv.URL+"/api/v1/test-panic", nil), 500, "internal")
	if strings.Contains(p["detail"].(string), "boom") {
		t.Error("panic value leaked into the response")
	}
	resp := testkit.Get(t, srv.URL+"/healthz", nil)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("server unhealthy after panic: %d", resp.StatusCode)
	}
}

func TestProblemPages(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	resp := testkit.Get(t, srv.URL+"/problems/validation-failed", nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(body), "Validation failed") {
		t.Errorf("problem page: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	resp = testkit.Get(t, srv.URL+"/problems/no-such-type", nil)
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("unknown problem page: %d", resp.StatusCode)
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	testkit.Get(t, srv.URL+"/healthz", nil).Body.Close()
	resp := testkit.Get(t, srv.MetricsURL+"/metrics", nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `linkqr_http_requests_total{code="200",method="GET",route="/healthz"}`) {
		t.Errorf("metrics lack the healthz request:\n%.2000s", body)
	}
}

// TestEveryAPIRouteIsDocumented keeps the router and the OpenAPI document
// in step: a route without a documented operation, or a documented
// operation without a route, fails.
func TestEveryAPIRouteIsDocumented(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	routed := map[string]bool{}
	err := chi.Walk(srv.App.Router(), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if rest, ok := strings.CutPrefix(route, "/api/v1/"); ok {
			routed[method+" /"+strings.TrimSuffix(rest, "/")] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, item := range api.Spec().Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	for op := range routed {
		if !documented[op] {
			t.Errorf("%s is routed but not in the OpenAPI document", op)
		}
	}
	for op := range documented {
		if !routed[op] {
			t.Errorf("%s is documented but not routed", op)
		}
	}
	if len(routed) < 9 {
		t.Errorf("only %d API routes found: %v", len(routed), routed)
	}
}
