package app_test

import (
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/app"
	"github.com/linkqr/linkqr/internal/testkit"
)

// scrapeSeries returns the linkqr_http_* sample lines (name{labels} value)
// of a /metrics response.
func scrapeSeries(t *testing.T, url string) []string {
	t.Helper()
	resp := testkit.Get(t, url, nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	var out []string
	for line := range strings.Lines(string(body)) {
		if strings.HasPrefix(line, "linkqr_http_") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// sendJunk sends n requests with made-up methods and random paths, the way
// a scanner or a fuzzer does, from 4 connections at once.
func sendJunk(t *testing.T, base string, n int) {
	t.Helper()
	shapes := []string{"/A", "/A/B/x", "/api/A", "/api/v1/A/B", "/static/A", "/problems/A/B", "/w/A/B/y", "/docs/A"}
	var wg sync.WaitGroup
	for worker := range 4 {
		wg.Go(func() {
			for i := worker; i < n; i += 4 {
				method := "M" + strings.ToUpper(rand.Text()[:10]) // a new method every time
				if i%3 == 0 {
					method = http.MethodGet // a known method on an unknown path
				}
				path := strings.NewReplacer("A", rand.Text()[:12], "B", rand.Text()[:8]).Replace(shapes[i%len(shapes)])
				req, err := http.NewRequest(method, base+path, nil)
				if err != nil {
					t.Error(err)
					return
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
}

// TestMetricsSeriesStayBounded is finding 2 of the hardening issue: every
// made-up method and random path used to become label values of its own.
// After 300 junk requests the scrape has a handful of series, and 300 more
// with new methods and paths add none; no method or path a client invented
// appears in the scrape.
func TestMetricsSeriesStayBounded(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	testkit.Get(t, srv.URL+"/healthz", nil).Body.Close()
	scrapeSeries(t, srv.MetricsURL+"/metrics") // so the scrapes' own series exist in both

	sendJunk(t, srv.URL, 300)
	first := scrapeSeries(t, srv.MetricsURL+"/metrics")
	sendJunk(t, srv.URL, 300)
	second := scrapeSeries(t, srv.MetricsURL+"/metrics")

	count := func(lines []string, prefix string) int {
		n := 0
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				n++
			}
		}
		return n
	}
	requests := count(second, "linkqr_http_requests_total{")
	if requests == 0 || requests > 25 {
		t.Errorf("%d request series after 600 junk requests, want a handful:\n%s", requests, strings.Join(second, "\n"))
	}
	if a, b := count(first, "linkqr_http_requests_total{"), requests; a != b {
		t.Errorf("300 more junk requests grew the request series from %d to %d:\n%s\n---\n%s", a, b,
			strings.Join(first, "\n"), strings.Join(second, "\n"))
	}
	if a, b := count(first, "linkqr_http_request_duration_seconds_bucket{"), count(second, "linkqr_http_request_duration_seconds_bucket{"); a != b {
		t.Errorf("300 more junk requests grew the latency series from %d to %d", a, b)
	}
	known := map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true, "other": true}
	total := 0.0
	for _, l := range second {
		if !strings.HasPrefix(l, "linkqr_http_requests_total{") {
			continue
		}
		_, rest, _ := strings.Cut(l, `method="`)
		method, _, _ := strings.Cut(rest, `"`)
		if !known[method] {
			t.Errorf("method label %q in %s", method, l)
		}
		_, rest, _ = strings.Cut(l, `route="`)
		route, _, _ := strings.Cut(rest, `"`)
		if route != "unmatched" && !strings.HasPrefix(route, "/") {
			t.Errorf("route label %q in %s", route, l)
		}
		var v float64
		if _, err := fmt.Sscan(l[strings.LastIndexByte(l, ' ')+1:], &v); err != nil {
			t.Fatal(err)
		}
		total += v
	}
	if total < 600 {
		t.Errorf("the request series count %v requests, want at least the 600 sent", total)
	}
	for _, want := range []string{
		`linkqr_http_requests_total{code="200",method="GET",route="/healthz"} 1`,
		`method="other",route="unmatched"`,
		`code="404",method="GET",route="unmatched"`,
	} {
		if !strings.Contains(strings.Join(second, "\n"), want) {
			t.Errorf("scrape lacks %s:\n%s", want, strings.Join(second, "\n"))
		}
	}
}

// TestMetricsNeverPublic is issue #28's: GET /metrics on the public address
// is 404 whatever LINKQR_METRICS_ADDR says: the default (unset or empty,
// 127.0.0.1:9090, which the testkit does not bind), "off", or a port of its
// own.
func TestMetricsNeverPublic(t *testing.T) {
	t.Parallel()
	key := testkit.NewSecretKey()
	first := testkit.StartServer(t, testkit.WithEnv("LINKQR_SECRET_KEY", key))
	for _, value := range []string{"", "off", "127.0.0.1:0"} {
		srv := testkit.StartServer(t, testkit.WithPool(first.Pool), testkit.WithEnv("LINKQR_SECRET_KEY", key), testkit.WithEnv("LINKQR_METRICS_ADDR", value))
		for _, method := range []string{"GET", "HEAD"} {
			resp := fetchRaw(t, method, srv.URL+"/metrics")
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("LINKQR_METRICS_ADDR=%q: %s /metrics on LINKQR_ADDR = %d, want 404", value, method, resp.StatusCode)
			}
		}
	}
	resp := fetchRaw(t, "GET", first.URL+"/metrics")
	if resp.StatusCode != http.StatusNotFound || first.MetricsURL == "" {
		t.Fatalf("GET /metrics on LINKQR_ADDR = %d (metrics at %q), want 404", resp.StatusCode, first.MetricsURL)
	}
	if resp := fetchRaw(t, "GET", first.MetricsURL+"/metrics"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /metrics on LINKQR_METRICS_ADDR = %d, want 200", resp.StatusCode)
	}
}

// TestMetricsOnTheirOwnListener: /metrics answers on LINKQR_METRICS_ADDR
// (and nothing else does there), the main listener answers 404 for it, and
// the metrics listener closes when Serve returns.
func TestMetricsOnTheirOwnListener(t *testing.T) {
	t.Parallel()
	var a *app.App
	srv := serveApp(t, func(x *app.App) { a = x }, "LINKQR_METRICS_ADDR", "127.0.0.1:0")
	eventually(t, 10*time.Second, "metrics listener bound", func() bool { return a.MetricsListenAddr() != nil })
	metricsURL := "http://" + a.MetricsListenAddr().String()

	testkit.Get(t, srv.URL+"/healthz", nil).Body.Close()
	resp := testkit.Get(t, srv.URL+"/metrics", nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on LINKQR_ADDR: %d, want 404", resp.StatusCode)
	}

	resp = testkit.Get(t, metricsURL+"/metrics", nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics on LINKQR_METRICS_ADDR: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		`linkqr_http_requests_total{code="200",method="GET",route="/healthz"} 1`,
		// Not routed here, /metrics is taken for a link code (reserved, so none).
		`linkqr_http_requests_total{code="404",method="GET",route="/{code}"} 1`,
		"linkqr_scan_buffer_depth",
		"linkqr_scan_write_duration_seconds_count 0",
		"linkqr_scan_unwritten_age_seconds_count 0",
		`linkqr_retention_purged_rows_total{table="scans"} 0`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if resp.Header.Get("X-Request-Id") == "" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("metrics response headers: %v", resp.Header)
	}
	for _, path := range []string{"/healthz", "/api/v1/workspace", "/docs"} {
		resp := testkit.Get(t, metricsURL+path, nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s on LINKQR_METRICS_ADDR: %d, want 404", path, resp.StatusCode)
		}
	}
	if n := len(srv.log.lines(`"msg":"serving metrics"`, a.MetricsListenAddr().String())); n != 1 {
		t.Errorf("%d log lines announce the metrics listener, want 1", n)
	}

	srv.stop()
	if c, err := net.DialTimeout("tcp", a.MetricsListenAddr().String(), 5*time.Second); err == nil {
		c.Close()
		t.Error("the metrics listener still accepts connections after Serve returned")
	}
}

// TestMetricsOff: LINKQR_METRICS_ADDR=off runs no metrics listener (and
// announces none); the main listener still answers 404 for /metrics.
func TestMetricsOff(t *testing.T) {
	t.Parallel()
	var a *app.App
	srv := serveApp(t, func(x *app.App) { a = x }, "LINKQR_METRICS_ADDR", "off")
	eventually(t, 10*time.Second, "the main listener to answer", func() bool {
		resp, err := http.Get(srv.URL + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	})
	if resp := fetchRaw(t, "GET", srv.URL+"/metrics"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on LINKQR_ADDR: %d, want 404", resp.StatusCode)
	}
	if addr := a.MetricsListenAddr(); addr != nil {
		t.Errorf("a metrics listener on %s with LINKQR_METRICS_ADDR=off", addr)
	}
	if n := len(srv.log.lines(`"msg":"serving metrics"`)); n != 0 {
		t.Errorf("%d log lines announce a metrics listener, want none", n)
	}
}
