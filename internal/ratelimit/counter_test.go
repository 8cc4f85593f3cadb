package ratelimit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/ratelimit"
	"github.com/linkqr/linkqr/internal/testkit"
)

func take(t *testing.T, c ratelimit.Counter, w ...ratelimit.Window) (int, time.Duration) {
	t.Helper()
	full, wait, err := c.Take(context.Background(), w...)
	if err != nil {
		t.Fatal(err)
	}
	return full, wait
}

func give(t *testing.T, c ratelimit.Counter, w ...ratelimit.Window) {
	t.Helper()
	if err := c.Give(context.Background(), w...); err != nil {
		t.Fatal(err)
	}
}

// counterContract is what every Counter does: count up to the limit, then
// refuse with the rest of the window; a refusal by one window counts in
// none; what is given back may be taken again; never below zero.
func counterContract(t *testing.T, c ratelimit.Counter, advance func(time.Duration)) {
	t.Helper()
	link := ratelimit.Window{Key: uniqueKey(), Limit: 3, Length: 10 * time.Minute}
	addr := ratelimit.Window{Key: link.Key + ":addr", Limit: 2, Length: 15 * time.Minute}
	for i := range 2 {
		if full, _ := take(t, c, link, addr); full != -1 {
			t.Fatalf("event %d: refused by window %d", i+1, full)
		}
	}
	full, wait := take(t, c, link, addr)
	if full != 1 || wait <= 14*time.Minute || wait > 15*time.Minute {
		t.Fatalf("3rd event: full %d, wait %v; want the address's window (1), about 15 minutes left", full, wait)
	}
	// The refusal counted nothing in the link's window: one more fits.
	if full, _ := take(t, c, link); full != -1 {
		t.Fatalf("the link's 3rd event: refused by %d", full)
	}
	if full, _ := take(t, c, link); full != 0 {
		t.Fatalf("the link's 4th event: full %d, want 0", full)
	}
	give(t, c, link, addr)
	if full, _ := take(t, c, link, addr); full != -1 {
		t.Fatalf("after one given back: refused by %d", full)
	}
	other := ratelimit.Window{Key: uniqueKey(), Limit: 1, Length: time.Minute}
	give(t, c, other) // nothing to give: stays at zero
	if full, _ := take(t, c, other); full != -1 {
		t.Fatal("a window given back before anything was counted refused its first event")
	}
	if advance != nil {
		advance(15 * time.Minute)
		if full, _ := take(t, c, link, addr); full != -1 {
			t.Fatalf("after the windows ended: refused by %d", full)
		}
	}
}

func TestCountsContract(t *testing.T) {
	t.Parallel()
	clk := newClock()
	counterContract(t, ratelimit.NewCounts(clk.Now), clk.Advance)
}

func TestRedisCountsContract(t *testing.T) {
	t.Parallel()
	r := newRedis(t, testkit.RedisURL(t), nil, 0)
	counterContract(t, r, nil) // Redis keeps the time: windows end on its clock
	if s := r.Stats(); !s.Up || s.Errors != 0 || s.Fallbacks != 0 {
		t.Fatalf("stats %+v: Redis was not used for every count", s)
	}
}

// TestRedisCountsAcrossInstances: 60 events at once from three instances
// of a window of 20 count exactly 20, as one instance would: counted in
// Redis before any is acted on, not 20 per instance.
func TestRedisCountsAcrossInstances(t *testing.T) {
	t.Parallel()
	url := testkit.RedisURL(t)
	instances := []*ratelimit.Redis{newRedis(t, url, nil, 0), newRedis(t, url, nil, 0), newRedis(t, url, nil, 0)}
	w := ratelimit.Window{Key: uniqueKey(), Limit: 20, Length: 10 * time.Minute}
	var (
		mu      sync.Mutex
		counted int
		wg      sync.WaitGroup
	)
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			full, _, err := instances[i%3].Take(context.Background(), w)
			if err != nil {
				t.Error(err)
				return
			}
			if full < 0 {
				mu.Lock()
				counted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if counted != 20 {
		t.Fatalf("%d of 60 events counted by three instances, want 20", counted)
	}
}

// TestRedisCountsOutage: while Redis is away each instance counts on its
// own, starting from what it counted through Redis; once Redis answers,
// the shared count decides again.
func TestRedisCountsOutage(t *testing.T) {
	t.Parallel()
	srv := testkit.StartRedis(t)
	clk := newClock()
	a, b := newRedis(t, srv.URL, clk, 0), newRedis(t, srv.URL, clk, 0)
	w := ratelimit.Window{Key: uniqueKey(), Limit: 3, Length: 10 * time.Minute}
	take(t, a, w)
	take(t, a, w)
	srv.Stop()
	if full, _ := take(t, a, w); full != -1 || a.Stats().Up {
		t.Fatalf("a's 3rd event in the outage: full %d, stats %+v", full, a.Stats())
	}
	if full, _ := take(t, a, w); full != 0 {
		t.Fatalf("a's 4th event of 3 in the outage: full %d, want refused (a counted 2 through Redis)", full)
	}
	if full, _ := take(t, b, w); full != -1 {
		t.Fatalf("b in the outage, on its own: full %d", full)
	}
	srv.Start() // an empty Redis: the shared count starts again
	clk.Advance(time.Second)
	for i := range 3 {
		if full, _ := take(t, []*ratelimit.Redis{a, b}[i%2], w); full != -1 {
			t.Fatalf("event %d after Redis returned: full %d", i+1, full)
		}
	}
	if full, _ := take(t, b, w); full != 0 || !a.Stats().Up || !b.Stats().Up {
		t.Fatalf("4th shared event after Redis returned: full %d, stats %+v %+v", full, a.Stats(), b.Stats())
	}
}
