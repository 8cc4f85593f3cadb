package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunLoadCounts(t *testing.T) {
	t.Parallel()
	var served atomic.Uint64
	var mu sync.Mutex
	conns := map[string]bool{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr] = true
		mu.Unlock()
		if r.Header.Get("User-Agent") != "bench-test" {
			http.Error(w, "no UA", http.StatusBadRequest)
			return
		}
		served.Add(1)
		if strings.HasSuffix(r.URL.Path, "/bad") {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		http.Redirect(w, r, "https://example.com"+r.URL.Path, http.StatusFound)
	}))
	srv.Start()
	defer srv.Close()

	sc := scenario{
		Name:     "test",
		URLs:     []string{srv.URL + "/a", srv.URL + "/b", srv.URL + "/c", srv.URL + "/bad"},
		Header:   http.Header{"User-Agent": {"bench-test"}},
		WantCode: http.StatusFound,
	}
	warm, measured, err := runLoad(context.Background(), sc, loadOptions{Conns: 4, Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	total := warm.OK + warm.Errors + measured.OK + measured.Errors
	if total == 0 || total != served.Load() {
		t.Fatalf("client counted %d requests, server served %d", total, served.Load())
	}
	// One in four URLs answers 418: errors are counted, not followed.
	for name, r := range map[string]loadResult{"warm": warm, "measured": measured} {
		if r.OK == 0 || r.Errors == 0 {
			t.Fatalf("%s: ok %d errors %d", name, r.OK, r.Errors)
		}
		ratio := float64(r.Errors) / float64(r.OK+r.Errors)
		if ratio < 0.15 || ratio > 0.35 {
			t.Errorf("%s: error ratio %.2f, want ≈0.25", name, ratio)
		}
		if r.Latency.Count() != r.OK+r.Errors {
			t.Errorf("%s: %d latencies for %d requests", name, r.Latency.Count(), r.OK+r.Errors)
		}
		if len(r.Samples) != 1 || !strings.Contains(r.Samples[0], "status 418") {
			t.Errorf("%s: samples %q", name, r.Samples)
		}
	}
	if measured.Elapsed < 300*time.Millisecond || measured.Elapsed > 2*time.Second {
		t.Errorf("measured elapsed %v, want 300ms plus the last requests", measured.Elapsed)
	}
	if measured.Throughput() <= 0 {
		t.Error("no throughput")
	}
	if len(conns) > 4 {
		t.Errorf("%d connections used, want at most 4 (keep-alive)", len(conns))
	}
}

func TestRunLoadTransportErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	url := srv.URL
	srv.Close() // nothing listens any more
	_, measured, err := runLoad(context.Background(), scenario{Name: "down", URLs: []string{url + "/x"}, WantCode: 200},
		loadOptions{Conns: 2, Duration: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if measured.Errors == 0 || measured.OK != 0 || len(measured.Samples) == 0 {
		t.Fatalf("got %+v", measured)
	}
}

func TestRunLoadStopsOnCancel(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, measured, err := runLoad(ctx, scenario{Name: "x", URLs: []string{srv.URL}, WantCode: 200}, loadOptions{Conns: 2, Duration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 5*time.Second || measured.Errors != 0 {
		t.Fatalf("took %v, %d errors", time.Since(start), measured.Errors)
	}
}

// A paced run never sends more than its schedule allows, however fast the
// server answers: rate × time, plus the connections' first requests.
func TestRunLoadPaced(t *testing.T) {
	t.Parallel()
	var served atomic.Uint64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.WriteHeader(http.StatusFound)
	}))
	defer srv.Close()
	sc := scenario{Name: "paced", URLs: []string{srv.URL + "/a"}, WantCode: http.StatusFound}
	opts := loadOptions{Conns: 4, Warmup: 100 * time.Millisecond, Duration: 400 * time.Millisecond, Rate: 50}
	warm, measured, err := runLoad(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	sent := warm.OK + measured.OK + warm.Errors + measured.Errors
	limit := uint64(opts.Rate*(opts.Warmup+opts.Duration).Seconds()) + uint64(opts.Conns)
	if sent == 0 || sent > limit || served.Load() != sent || warm.Errors+measured.Errors != 0 {
		t.Fatalf("paced at %v/s for %v: %d sent (%d served, %d errors), want 1..%d", opts.Rate, opts.Warmup+opts.Duration, sent, served.Load(), warm.Errors+measured.Errors, limit)
	}
}
