package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseCPULine(t *testing.T) {
	t.Parallel()
	idle, total, err := parseCPULine("cpu  100 5 50 800 40 0 5 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
	if err != nil || idle != 840 || total != 1000 {
		t.Fatalf("idle %d, total %d, %v; want 840, 1000", idle, total, err)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 2 x 4 5"} {
		if _, _, err := parseCPULine(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestWaitFoldedWaitsForAFoldAfterTheLoad serves a fold lag whose fold
// begins 400 ms after the load ended (and takes 100 ms): waitFolded must
// not return before that fold has finished, and must return soon after.
func TestWaitFoldedWaitsForAFoldAfterTheLoad(t *testing.T) {
	t.Parallel()
	ended := time.Now()
	before := ended.Add(-10 * time.Second) // the as_of of the fold before the load
	var asOf atomic.Int64
	asOf.Store(before.UnixNano())
	foldBegins, foldEnds := ended.Add(400*time.Millisecond), ended.Add(500*time.Millisecond)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if time.Now().After(foldEnds) {
			asOf.Store(foldBegins.UnixNano())
		}
		lag := time.Since(time.Unix(0, asOf.Load())).Seconds()
		fmt.Fprintf(w, "# HELP linkqr_scan_fold_lag_seconds x\nlinkqr_scan_fold_lag_seconds_other 0\nlinkqr_scan_fold_lag_seconds %g\n", lag)
	}))
	defer srv.Close()
	b := &bench{log: io.Discard, linkqrMetrics: srv.URL, loadEnded: ended}
	b.waitFolded(context.Background(), "the next round")
	if now := time.Now(); now.Before(foldEnds) || now.After(foldEnds.Add(5*time.Second)) {
		t.Errorf("returned %v after the load ended; the fold ended after %v", now.Sub(ended), foldEnds.Sub(ended))
	}

	// A server without the metric (the bare server) is not waited for.
	bare := httptest.NewServer(http.NotFoundHandler())
	defer bare.Close()
	b = &bench{log: io.Discard, linkqrMetrics: bare.URL, loadEnded: time.Now()}
	start := time.Now()
	b.waitFolded(context.Background(), "the next round")
	if waited := time.Since(start); waited > 2*time.Second {
		t.Errorf("waited %v for a server without the metric", waited)
	}
}

// TestScanWritesSince reads the crash bound's counters and the histogram
// of the written batches' oldest scans from a metrics listener twice and
// reports the difference at the end of a load's line, and nothing when
// there was nothing new or a reading failed.
func TestScanWritesSince(t *testing.T) {
	t.Parallel()
	var waits, seconds, fast, slow, slowest atomic.Int64 // batches within 25 ms, 50 ms, beyond 2.5 s
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "linkqr_scan_bound_waits_total %d\nlinkqr_scan_bound_wait_seconds_total %d.5\n", waits.Load(), seconds.Load())
		f, s, x := fast.Load(), slow.Load(), slowest.Load()
		fmt.Fprintf(w, "# TYPE linkqr_scan_unwritten_age_seconds histogram\n")
		fmt.Fprintf(w, "linkqr_scan_unwritten_age_seconds_bucket{le=\"0.025\"} %d\n", f)
		fmt.Fprintf(w, "linkqr_scan_unwritten_age_seconds_bucket{le=\"0.05\"} %d\n", f+s)
		fmt.Fprintf(w, "linkqr_scan_unwritten_age_seconds_bucket{le=\"2.5\"} %d\n", f+s)
		fmt.Fprintf(w, "linkqr_scan_unwritten_age_seconds_bucket{le=\"+Inf\"} %d\n", f+s+x)
		fmt.Fprintf(w, "linkqr_scan_unwritten_age_seconds_sum 1\nlinkqr_scan_unwritten_age_seconds_count %d\n", f+s+x)
	}))
	defer srv.Close()
	b := &bench{log: io.Discard, linkqrMetrics: srv.URL}
	ctx := context.Background()
	fast.Store(500) // before the load
	before := b.readScanWrites(ctx)
	if got := b.readScanWrites(ctx).since(before); got != "" {
		t.Errorf("no waits, no batches: %q", got)
	}
	waits.Store(1234)
	seconds.Store(3)
	fast.Add(990)
	slow.Add(10)
	if got, want := b.readScanWrites(ctx).since(before), ", 1234 redirects waited at the crash bound (3.00 s in all); of 1000 scan batches 99 % committed within 25.00ms of their oldest redirect"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	slow.Add(10) // now 20 of 1,010 above 25 ms
	if got, want := b.readScanWrites(ctx).since(before), "of 1010 scan batches 99 % committed within 50.00ms"; !strings.Contains(got, want) {
		t.Errorf("got %q, want it to say %q", got, want)
	}
	slowest.Add(100) // the 99th percentile above the last finite bucket: unknown, not claimed
	if got, want := b.readScanWrites(ctx).since(before), ", 1234 redirects waited at the crash bound (3.00 s in all)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := (&bench{log: io.Discard}).readScanWrites(ctx).since(before); got != "" {
		t.Errorf("without linkqr's metrics: %q", got)
	}
	srv.Close()
	if got := b.readScanWrites(ctx).since(before); got != "" {
		t.Errorf("metrics unreachable: %q", got)
	}
}
