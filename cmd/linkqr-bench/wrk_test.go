package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
)

// wrk paced keeps its schedule whatever the answers' latency: with
// answers taking 20 ms, ten connections still send the rate asked (where
// pausing after each answer would send fewer), and never more than the
// schedule plus each connection's first request.
func TestWrkPacedKeepsItsSchedule(t *testing.T) {
	testkit.RequireBinary(t, "wrk")
	var served atomic.Uint64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		time.Sleep(20 * time.Millisecond) // a slow server, not synchronisation
		w.WriteHeader(http.StatusFound)
	}))
	defer srv.Close()
	w, warning := findWrk(t.TempDir())
	if w == nil {
		t.Fatal(warning)
	}
	const rate, conns = 200.0, 10
	sc := scenario{Name: "paced", URLs: []string{srv.URL + "/a", srv.URL + "/b"}, WantCode: http.StatusFound}
	res, err := w.runPaced(context.Background(), sc, conns, rate, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	sent := res.OK + res.Errors
	upper := uint64(rate*res.Elapsed.Seconds()) + conns
	// Ten connections at 20 ms could send 500 a second: a schedule that
	// stopped holding them back would show above upper; one that lost
	// slots far below the rate.
	if res.Errors != 0 || sent > upper || float64(sent) < rate*res.Elapsed.Seconds()/2 || served.Load() < sent {
		t.Fatalf("paced at %v/s for %v over %d connections: sent %d (%d errors, %d served), want %v..%d",
			rate, res.Elapsed, conns, sent, res.Errors, served.Load(), rate*res.Elapsed.Seconds()/2, upper)
	}
	t.Logf("sent %d in %v (%.0f/s)", sent, res.Elapsed, float64(sent)/res.Elapsed.Seconds())
}
