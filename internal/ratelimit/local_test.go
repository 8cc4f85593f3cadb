package ratelimit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/ratelimit"
)

// allow is Allow that fails the test on an error.
func allow(t testing.TB, l ratelimit.Limiter, key string, perMinute int) ratelimit.Result {
	t.Helper()
	res, err := l.Allow(context.Background(), key, perMinute)
	if err != nil {
		t.Fatalf("Allow(%q, %d): %v", key, perMinute, err)
	}
	return res
}

func TestLocalCountsDownThenRefuses(t *testing.T) {
	t.Parallel()
	clk := newClock()
	l := ratelimit.NewLocal(clk.Now)
	// 5 a minute: one request every 12 s, a burst of 5.
	for i := range 5 {
		got := allow(t, l, "k", 5)
		want := ratelimit.Result{Limit: 5, Allowed: true, Remaining: 4 - i, ResetAfter: time.Duration(i+1) * 12 * time.Second}
		if got != want {
			t.Fatalf("request %d: %+v, want %+v", i+1, got, want)
		}
	}
	got := allow(t, l, "k", 5)
	want := ratelimit.Result{Limit: 5, Allowed: false, Remaining: 0, RetryAfter: 12 * time.Second, ResetAfter: time.Minute}
	if got != want {
		t.Fatalf("request 6: %+v, want %+v", got, want)
	}
	// A refused request costs nothing: the wait stays 12 s.
	if got := allow(t, l, "k", 5); got.Allowed || got.RetryAfter != 12*time.Second {
		t.Fatalf("request 7: %+v", got)
	}

	clk.Advance(12*time.Second - time.Nanosecond)
	if got := allow(t, l, "k", 5); got.Allowed || got.RetryAfter != time.Nanosecond {
		t.Fatalf("1 ns before the refill: %+v", got)
	}
	clk.Advance(time.Nanosecond)
	if got := allow(t, l, "k", 5); !got.Allowed || got.Remaining != 0 || got.ResetAfter != time.Minute {
		t.Fatalf("after one interval: %+v", got)
	}
	clk.Advance(time.Minute)
	if got := allow(t, l, "k", 5); !got.Allowed || got.Remaining != 4 || got.ResetAfter != 12*time.Second {
		t.Fatalf("after a full minute: %+v", got)
	}
}

func TestLocalKeysAreIndependent(t *testing.T) {
	t.Parallel()
	l := ratelimit.NewLocal(newClock().Now)
	allow(t, l, "a", 1)
	if got := allow(t, l, "a", 1); got.Allowed {
		t.Fatalf("a's second request allowed: %+v", got)
	}
	if got := allow(t, l, "b", 1); !got.Allowed || got.Remaining != 0 {
		t.Fatalf("b is charged for a: %+v", got)
	}
}

// A limit that does not divide a minute evenly still allows exactly the
// limit from an idle budget (integer arithmetic, no rounding drift).
func TestLocalUnevenLimitAllowsExactlyTheLimit(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{1, 7, 600, 99991, 100000} {
		l := ratelimit.NewLocal(newClock().Now)
		allowed := 0
		for range limit + 3 {
			if allow(t, l, "k", limit).Allowed {
				allowed++
			}
		}
		if allowed != limit {
			t.Errorf("limit %d: %d allowed", limit, allowed)
		}
	}
}

// The limit is read on every call: lowering it applies to the next request,
// with what was used so far still counted.
func TestLocalLimitChangeAppliesAtOnce(t *testing.T) {
	t.Parallel()
	l := ratelimit.NewLocal(newClock().Now)
	for range 3 {
		allow(t, l, "k", 100)
	}
	// 3 requests used 3×0.6 s of the budget; at 2 a minute (30 s each) one
	// more fits.
	if got := allow(t, l, "k", 2); !got.Allowed || got.Limit != 2 || got.Remaining != 0 {
		t.Fatalf("first request at the new limit: %+v", got)
	}
	if got := allow(t, l, "k", 2); got.Allowed || got.Limit != 2 {
		t.Fatalf("second request at the new limit: %+v", got)
	}
	if got := allow(t, l, "k", 100); !got.Allowed || got.Limit != 100 {
		t.Fatalf("raised again: %+v", got)
	}
}

func TestLocalBurstNeverExceedsTheLimit(t *testing.T) {
	t.Parallel()
	l := ratelimit.NewLocal(newClock().Now)
	const limit, burst = 10, 200
	var allowed atomic.Int64
	var start, done sync.WaitGroup
	start.Add(1)
	for range burst {
		done.Go(func() {
			start.Wait()
			if allow(t, l, "k", limit).Allowed {
				allowed.Add(1)
			}
		})
	}
	start.Done()
	done.Wait()
	if allowed.Load() != limit {
		t.Fatalf("%d of %d concurrent requests allowed, want exactly %d", allowed.Load(), burst, limit)
	}
}
