package ratelimit_test

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/ratelimit"
	"github.com/linkqr/linkqr/internal/testkit"
)

// newRedis is one instance's limiter on the Redis at url, with a fake
// clock for its retry schedule (Redis keeps the GCRA time itself).
func newRedis(t testing.TB, url string, clk *clock, timeout time.Duration) *ratelimit.Redis {
	t.Helper()
	return newRedisLogging(t, url, clk, timeout, testkit.Logger(t))
}

func newRedisLogging(t testing.TB, url string, clk *clock, timeout time.Duration, log *slog.Logger) *ratelimit.Redis {
	t.Helper()
	client, err := ratelimit.NewClient(url)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now
	if clk != nil {
		now = clk.Now
	}
	r := ratelimit.NewRedis(client, ratelimit.RedisOptions{
		Log: log, Timeout: timeout, RetryInterval: time.Second, Now: now,
	})
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// uniqueKey keeps tests that share one Redis apart.
func uniqueKey() string { return "test-" + rand.Text() }

func TestRedisInstancesShareOneBudget(t *testing.T) {
	t.Parallel()
	url := testkit.RedisURL(t)
	a, b := newRedis(t, url, nil, 0), newRedis(t, url, nil, 0)
	key := uniqueKey()
	// 4 a minute (one every 15 s), drawn alternately from two instances.
	// Redis's clock moves between requests, by at most the time since start.
	start := time.Now()
	within := func(got, want time.Duration) bool { return got <= want && got >= want-time.Since(start) }
	for i, l := range []*ratelimit.Redis{a, b, a, b} {
		got := allow(t, l, key, 4)
		if !got.Allowed || got.Limit != 4 || got.Remaining != 3-i || got.RetryAfter != 0 {
			t.Fatalf("request %d: %+v, want allowed with %d remaining", i+1, got, 3-i)
		}
		if want := time.Duration(i+1) * 15 * time.Second; !within(got.ResetAfter, want) {
			t.Fatalf("request %d: reset after %v, want %v less the time since the first request", i+1, got.ResetAfter, want)
		}
	}
	for _, l := range []*ratelimit.Redis{a, b} {
		got := allow(t, l, key, 4)
		if got.Allowed || got.Remaining != 0 || !within(got.RetryAfter, 15*time.Second) || !within(got.ResetAfter, time.Minute) {
			t.Fatalf("5th request: %+v, want refused, retry after 15 s and reset after 60 s less the time since the first request", got)
		}
	}
	for _, l := range []*ratelimit.Redis{a, b} {
		if s := l.Stats(); !s.Up || s.Errors != 0 || s.Fallbacks != 0 {
			t.Fatalf("stats %+v: Redis was not used for every decision", s)
		}
	}
}

// The two backends implement one algorithm: the same sequence of requests
// gets the same answers.
func TestRedisAgreesWithLocal(t *testing.T) {
	t.Parallel()
	r := newRedis(t, testkit.RedisURL(t), nil, 0)
	l := ratelimit.NewLocal(nil)
	key := uniqueKey()
	for i := range 8 {
		limit := 5
		if i >= 6 {
			limit = 600 // a raised limit applies at once on both
		}
		rr, lr := allow(t, r, key, limit), allow(t, l, key, limit)
		if rr.Allowed != lr.Allowed || rr.Remaining != lr.Remaining || rr.Limit != lr.Limit ||
			(rr.RetryAfter == 0) != (lr.RetryAfter == 0) {
			t.Fatalf("request %d: redis %+v, local %+v", i+1, rr, lr)
		}
	}
}

func TestRedisBurstAcrossInstancesNeverExceedsTheLimit(t *testing.T) {
	t.Parallel()
	url := testkit.RedisURL(t)
	// A generous timeout: this is about exactness, and on a loaded machine
	// 200 requests at once can wait past the default 250 ms, which would
	// fall back to per-instance limits (tested apart).
	instances := []*ratelimit.Redis{newRedis(t, url, nil, 5*time.Second), newRedis(t, url, nil, 5*time.Second)}
	key := uniqueKey()
	const limit, burst = 10, 200
	var allowed atomic.Int64
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range burst {
		done.Go(func() {
			start.Wait()
			if allow(t, instances[i%2], key, limit).Allowed {
				allowed.Add(1)
			}
		})
	}
	start.Done()
	done.Wait()
	if allowed.Load() != limit {
		t.Fatalf("%d of %d concurrent requests allowed on two instances, want exactly %d", allowed.Load(), burst, limit)
	}
	for _, l := range instances {
		if s := l.Stats(); s.Fallbacks != 0 {
			t.Fatalf("stats %+v: some decisions were made in-process, so the count proves nothing about Redis", s)
		}
	}
}

func TestRedisOutageFallsBackAndRecovers(t *testing.T) {
	t.Parallel()
	srv := testkit.StartRedis(t)
	clk := newClock()
	logs := &countingHandler{}
	a, b := newRedisLogging(t, srv.URL, clk, 0, slog.New(logs)), newRedis(t, srv.URL, clk, 0)

	key := uniqueKey()
	allow(t, a, key, 2)
	allow(t, b, key, 2)
	if got := allow(t, a, key, 2); got.Allowed {
		t.Fatalf("shared budget of 2 allowed a 3rd request: %+v", got)
	}

	srv.Stop()
	// Served and still limited, by each instance on its own.
	outage := uniqueKey()
	for i := range 2 {
		if got := allow(t, a, outage, 2); !got.Allowed || got.Remaining != 1-i {
			t.Fatalf("request %d during the outage: %+v", i+1, got)
		}
	}
	if got := allow(t, a, outage, 2); got.Allowed || ratelimit.RetryAfterSeconds(got.RetryAfter) != 30 {
		t.Fatalf("3rd request during the outage: %+v, want refused for 30 s", got)
	}
	s := a.Stats()
	if s.Up || s.Errors != 1 || s.Fallbacks != 3 {
		t.Fatalf("stats during the outage %+v: want down, 1 error (no retry before the interval), 3 fallbacks", s)
	}
	clk.Advance(time.Second)
	allow(t, a, outage, 2) // one retry, failing again
	if s := a.Stats(); s.Up || s.Errors != 2 {
		t.Fatalf("stats after a failed retry %+v", s)
	}

	srv.Start()
	clk.Advance(time.Second)
	after := uniqueKey()
	if got := allow(t, a, after, 2); !got.Allowed || !a.Stats().Up {
		t.Fatalf("after Redis returned: %+v, stats %+v", got, a.Stats())
	}
	clk.Advance(time.Second)
	if got := allow(t, b, after, 2); !got.Allowed || got.Remaining != 0 || !b.Stats().Up {
		t.Fatalf("b after Redis returned: %+v (want the budget shared with a again), stats %+v", got, b.Stats())
	}
	if got := allow(t, a, after, 2); got.Allowed {
		t.Fatalf("shared budget of 2 allowed a 3rd request after recovery: %+v", got)
	}
	if w, i := logs.count(slog.LevelWarn), logs.count(slog.LevelInfo); w != 1 || i != 1 {
		t.Fatalf("logged %d warnings and %d infos, want the outage once and its end once", w, i)
	}
}

// What Redis allowed is charged in-process too, so an outage does not hand
// an instance a fresh budget.
func TestRedisOutageKeepsWhatThisInstanceUsed(t *testing.T) {
	t.Parallel()
	srv := testkit.StartRedis(t)
	r := newRedis(t, srv.URL, newClock(), 0)
	key := uniqueKey()
	allow(t, r, key, 3)
	allow(t, r, key, 3)
	srv.Stop()
	if got := allow(t, r, key, 3); !got.Allowed || got.Remaining != 0 || r.Stats().Up {
		t.Fatalf("3rd request, in-process: %+v %+v", got, r.Stats())
	}
	if got := allow(t, r, key, 3); got.Allowed {
		t.Fatalf("a 4th request of 3 allowed after Redis went away: %+v", got)
	}
}

// Calls in flight when Redis goes away all fail; the outage is still one
// outage, logged once.
func TestRedisOutageUnderConcurrencyIsLoggedOnce(t *testing.T) {
	t.Parallel()
	srv := testkit.StartRedis(t)
	logs := &countingHandler{}
	r := newRedisLogging(t, srv.URL, newClock(), 0, slog.New(logs))
	allow(t, r, uniqueKey(), 10)
	srv.Stop()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { allow(t, r, uniqueKey(), 10) })
	}
	wg.Wait()
	if w, s := logs.count(slog.LevelWarn), r.Stats(); w != 1 || s.Up || s.Fallbacks != 50 {
		t.Fatalf("%d warnings, stats %+v; want one warning, down, 50 fallbacks", w, s)
	}
}

// countingHandler counts log records by level.
type countingHandler struct {
	mu     sync.Mutex
	levels map[slog.Level]int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *countingHandler) WithGroup(string) slog.Handler            { return h }
func (h *countingHandler) Handle(_ context.Context, rec slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.levels == nil {
		h.levels = map[slog.Level]int{}
	}
	h.levels[rec.Level]++
	return nil
}

func (h *countingHandler) count(l slog.Level) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.levels[l]
}

// A Redis that accepts connections but never answers costs a request at
// most the timeout, and only until the first failure: later requests do
// not wait on it.
func TestRedisThatHangsFallsBack(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); ln.Close(); conns.Wait() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() { <-stop; c.Close() }) // read nothing, answer nothing
		}
	}()
	clk := newClock()
	r := newRedis(t, "redis://"+ln.Addr().String()+"/0", clk, 100*time.Millisecond)
	key := uniqueKey()
	for i := range 3 {
		if got := allow(t, r, key, 3); !got.Allowed || got.Remaining != 2-i {
			t.Fatalf("request %d: %+v", i+1, got)
		}
	}
	if got := allow(t, r, key, 3); got.Allowed {
		t.Fatalf("4th request of 3 allowed: %+v", got)
	}
	if s := r.Stats(); s.Up || s.Errors != 1 || s.Fallbacks != 4 {
		t.Fatalf("stats %+v, want down after one timed-out call and 4 in-process decisions", s)
	}
}

// A request whose client went away is not a Redis failure.
func TestRedisCancelledRequestIsNotAnOutage(t *testing.T) {
	t.Parallel()
	r := newRedis(t, testkit.RedisURL(t), nil, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Allow(ctx, uniqueKey(), 5); err == nil {
		t.Fatal("Allow with a cancelled context succeeded")
	}
	if s := r.Stats(); !s.Up || s.Errors != 0 {
		t.Fatalf("stats %+v", s)
	}
}
