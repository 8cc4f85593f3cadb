package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
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

// A scenario's Host reaches the server in every request, from wrk (-H
// Host, which the script's per-request headers carry) and from the Go
// generator alike, while the connections go to the URLs' address; and
// both rotate through every path.
func TestGeneratorsSendHost(t *testing.T) {
	testkit.RequireBinary(t, "wrk")
	var mu sync.Mutex
	hosts, paths := map[string]int{}, map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts[r.Host]++
		paths[r.URL.Path]++
		mu.Unlock()
		w.WriteHeader(http.StatusFound)
	}))
	defer srv.Close()
	w, warning := findWrk(t.TempDir())
	if w == nil {
		t.Fatal(warning)
	}
	sc := scenario{Name: "custom", Host: "go.bench.example", URLs: []string{srv.URL + "/a", srv.URL + "/b", srv.URL + "/c"},
		Header: http.Header{"User-Agent": {chromeUA}}, WantCode: http.StatusFound}
	generators := map[string]func() (loadResult, error){
		"wrk": func() (loadResult, error) { return w.run(context.Background(), sc, 4, time.Second) },
		"go": func() (loadResult, error) {
			_, m, err := runLoad(context.Background(), sc, loadOptions{Conns: 4, Duration: 300 * time.Millisecond})
			return m, err
		},
	}
	for name, gen := range generators {
		mu.Lock()
		clear(hosts)
		clear(paths)
		mu.Unlock()
		res, err := gen()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		mu.Lock()
		if res.OK == 0 || res.Errors != 0 || len(hosts) != 1 || hosts["go.bench.example"] == 0 || len(paths) != 3 {
			t.Errorf("%s: %d ok, %d errors; the server saw hosts %v and paths %v", name, res.OK, res.Errors, hosts, paths)
		}
		mu.Unlock()
	}
}

// A scenario's ForwardedFor reaches the server with its own URL, from wrk
// (a third column of the request list, which the script formats into the
// request) and from the Go generator alike: each path always comes with
// its address, and the addresses rotate with the paths. Without it, no
// request has the header.
func TestGeneratorsSendForwardedFor(t *testing.T) {
	testkit.RequireBinary(t, "wrk")
	var mu sync.Mutex
	seen := map[string]map[string]int{} // path → X-Forwarded-For → requests
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if seen[r.URL.Path] == nil {
			seen[r.URL.Path] = map[string]int{}
		}
		seen[r.URL.Path][strings.Join(r.Header.Values("X-Forwarded-For"), "|")]++
		mu.Unlock()
		w.WriteHeader(http.StatusFound)
	}))
	defer srv.Close()
	w, warning := findWrk(t.TempDir())
	if w == nil {
		t.Fatal(warning)
	}
	fx := fixtures{Links: []fixtureLink{{Code: "a"}, {Code: "b"}, {Code: "c"}, {Code: "d"}, {Code: "e"}}}
	addrs := []netip.Addr{netip.MustParseAddr("80.128.0.1"), netip.MustParseAddr("2003::1"), netip.MustParseAddr("10.1.2.3")}
	want := map[string]string{"/a": "80.128.0.1", "/b": "2003::1", "/c": "10.1.2.3", "/d": "80.128.0.1", "/e": "2003::1"}
	for _, geo := range []bool{true, false} {
		sc := fx.redirect(srv.URL)
		if geo {
			sc = fx.redirectFrom(srv.URL, addrs)
		}
		generators := map[string]func() (loadResult, error){
			"wrk": func() (loadResult, error) { return w.run(context.Background(), sc, 4, time.Second) },
			"go": func() (loadResult, error) {
				_, m, err := runLoad(context.Background(), sc, loadOptions{Conns: 4, Duration: 300 * time.Millisecond})
				return m, err
			},
		}
		for name, gen := range generators {
			mu.Lock()
			clear(seen)
			mu.Unlock()
			res, err := gen()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			mu.Lock()
			if res.OK == 0 || res.Errors != 0 || len(seen) != len(want) {
				t.Errorf("%s (geo %v): %d ok, %d errors; the server saw %v", name, geo, res.OK, res.Errors, seen)
			}
			for path, xffs := range seen {
				wantXFF := ""
				if geo {
					wantXFF = want[path]
				}
				if len(xffs) != 1 || xffs[wantXFF] == 0 {
					t.Errorf("%s (geo %v): %s came with X-Forwarded-For %v, want only %q", name, geo, path, xffs, wantXFF)
				}
			}
			mu.Unlock()
		}
	}
}
