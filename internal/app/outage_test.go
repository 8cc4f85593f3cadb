package app_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/pgembed"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/strict"
)

// PostgreSQL stopped under load (docs/operations.md "Database outage"): cached codes
// keep answering 302, no request waits a second, an uncached code and the
// API get 503 with Retry-After, /readyz is 503 until the database is back,
// and then every scan answered with a 302 is in the database. The test runs
// on a private cluster, since stopping the suite's shared one would fail
// every other test.
func TestDatabaseOutageUnderLoad(t *testing.T) {
	strict.SkipShort(t, "a database outage under load (a PostgreSQL cluster of its own, stopped and started)")
	if _, err := pgembed.FindBinDir(); err != nil {
		testkit.SkipUnlessStrict(t, "PostgreSQL server binaries not found: "+err.Error())
	}
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "pg")
	open := func() *pgembed.Cluster {
		c, err := pgembed.Open(ctx, pgembed.Options{DataDir: dir, Mode: pgembed.Exclusive, ForTests: true})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cluster := open()
	t.Cleanup(func() { _ = cluster.Close(context.Background()) })
	pool, err := store.Connect(ctx, cluster.ConnString(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	srv := testkit.StartServer(t, testkit.WithPool(pool))
	tn := testkit.NewTenant(t, pool)
	token := srv.APIKey(t, tn.WorkspaceID)

	newLink := func(i int) string {
		l := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, fmt.Sprintf(`{"target_url":"https://example.com/outage/%d"}`, i)), 201)
		return l["short_url"].(string)
	}
	var cached []string
	for i := range 8 {
		cached = append(cached, newLink(i))
	}
	uncached := newLink(99)
	// A request that hangs fails the test (and does not hang it).
	client := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{MaxIdleConnsPerHost: 8},
		Timeout:       10 * time.Second,
	}
	// get answers a request, and how long it took.
	get := func(url string, header ...string) (*http.Response, time.Duration) {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		start := time.Now()
		resp, err := client.Do(req)
		took := time.Since(start)
		if err != nil {
			t.Errorf("GET %s: %v", url, err)
			return nil, took
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp, took
	}
	for _, u := range cached { // into the cache (and one scan each)
		if resp, _ := get(u); resp == nil || resp.StatusCode != http.StatusFound {
			t.Fatalf("warming %s: %v", u, resp)
		}
	}
	warmScans := int64(len(cached))

	// Load: four clients redirecting through the cached codes, each
	// paced at about 500 a second, recording every answer and the
	// slowest.
	var (
		stop        atomic.Bool
		found, fail atomic.Int64
		mu          sync.Mutex
		slowest     time.Duration
		wg          sync.WaitGroup
	)
	for c := range 4 {
		wg.Go(func() {
			for i := c; !stop.Load(); i++ {
				resp, took := get(cached[i%len(cached)])
				mu.Lock()
				slowest = max(slowest, took)
				mu.Unlock()
				if resp != nil && resp.StatusCode == http.StatusFound {
					found.Add(1)
				} else {
					fail.Add(1)
				}
				time.Sleep(2 * time.Millisecond) // pacing the load, not waiting for the server
			}
		})
	}
	stopLoad := func() {
		if !stop.Swap(true) {
			wg.Wait()
		}
	}
	t.Cleanup(stopLoad)
	eventually(t, time.Minute, "load before the outage", func() bool { return found.Load() >= 200 })

	// Stop PostgreSQL.
	if err := cluster.Close(ctx); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	atStop := found.Load()
	eventually(t, time.Minute, "/readyz to say not ready", func() bool {
		resp, _ := get(srv.URL + "/readyz")
		return resp != nil && resp.StatusCode == http.StatusServiceUnavailable
	})
	resp, took := get(uncached)
	if resp == nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || took >= time.Second {
		t.Errorf("uncached code during the outage: %v in %v, want 503 with Retry-After within 1 s", resp, took)
	}
	resp, took = get(srv.URL+"/api/v1/links", "Authorization", "Bearer "+token)
	if resp == nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") || took >= time.Second {
		t.Errorf("API during the outage: %v in %v, want a 503 problem with Retry-After within 1 s", resp, took)
	}
	// Six seconds without the database, under load; cached codes go on.
	eventually(t, time.Minute, "six seconds of outage", func() bool {
		return time.Since(stopped) >= 6*time.Second && found.Load() >= atStop+500
	})
	metricsBody := scrape(t, srv.MetricsURL)
	for _, want := range []string{"linkqr_database_up 0", "linkqr_scans_dropped_total 0"} {
		if !strings.Contains(metricsBody, want+"\n") {
			t.Errorf("/metrics during the outage lacks %q", want)
		}
	}
	for _, name := range []string{"linkqr_scan_bound_waits_total ", "linkqr_scan_bound_wait_seconds_total "} {
		if !strings.Contains(metricsBody, "\n"+name) {
			t.Errorf("/metrics lacks the crash bound's backpressure, %s", name)
		}
	}
	if !strings.Contains(metricsBody, "linkqr_scan_outage_buffer_depth ") || strings.Contains(metricsBody, "linkqr_scan_outage_buffer_depth 0\n") {
		t.Errorf("/metrics during the outage: the outage buffer should hold scans")
	}
	duringOutage := found.Load() - atStop

	// Start it again.
	cluster = open()
	eventually(t, time.Minute, "/readyz to say ready again", func() bool {
		resp, _ := get(srv.URL + "/readyz")
		return resp != nil && resp.StatusCode == http.StatusOK
	})
	eventually(t, time.Minute, "the uncached code to redirect again", func() bool {
		resp, _ := get(uncached)
		return resp != nil && resp.StatusCode == http.StatusFound
	})
	stopLoad()
	mu.Lock()
	t.Logf("%d redirects answered 302 (%d during the outage), %d not; slowest %v", found.Load(), duringOutage, fail.Load(), slowest)
	mu.Unlock()
	if n := fail.Load(); n != 0 {
		t.Errorf("%d redirects of cached codes were not answered 302", n)
	}
	if slowest >= time.Second {
		t.Errorf("the slowest redirect took %v, want under 1 s", slowest)
	}
	if duringOutage < 500 {
		t.Errorf("only %d redirects answered during the outage", duringOutage)
	}

	// Every answered scan is recorded: the load's, the warm-up's, and the
	// uncached code's once it redirected.
	want := found.Load() + warmScans + 1
	var rows int64
	eventually(t, time.Minute, "every answered scan in the database", func() bool {
		return pool.QueryRow(ctx, "SELECT count(*) FROM scans").Scan(&rows) == nil && rows >= want
	})
	if rows != want {
		t.Errorf("%d scans recorded, want %d", rows, want)
	}
	if b := scrape(t, srv.MetricsURL); !strings.Contains(b, "linkqr_database_up 1\n") || !strings.Contains(b, "linkqr_scan_outage_buffer_depth 0\n") {
		t.Errorf("/metrics after the outage: database not up or outage buffer not empty")
	}

	// Coherence: a re-point after the outage is seen at the next request.
	id := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/links?limit=100", token, ""), 200)["data"].([]any)
	var first map[string]any
	for _, l := range id {
		if m := l.(map[string]any); m["short_url"] == cached[0] {
			first = m
		}
	}
	testkit.JSON(t, srv.Do(t, "PATCH", "/api/v1/links/"+first["id"].(string), token, `{"target_url":"https://example.com/after"}`), 200)
	if resp, _ := get(cached[0]); resp == nil || resp.Header.Get("Location") != "https://example.com/after" {
		t.Errorf("after re-pointing: %v", resp)
	}
}

func scrape(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
