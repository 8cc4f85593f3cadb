package scan

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestUnwrittenFollowsTheRate: the bound is the hits of one CrashWindow at
// the last second's rate (at least MinUnwritten); past it acquire waits
// until a release, or fails with its context.
func TestUnwrittenFollowsTheRate(t *testing.T) {
	t.Parallel()
	clock := time.Unix(1_800_000_000, 0)
	u := newUnwritten()
	u.now = func() time.Time { return clock }
	ctx := context.Background()
	for range MinUnwritten {
		if err := u.acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	full, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := u.acquire(full); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire past the bound: %v, want it to wait until its context ends", err)
	}
	// A release lets a waiting hit in.
	got := make(chan error, 1)
	go func() { got <- u.acquire(ctx) }()
	u.release(1)
	if err := <-got; err != nil || u.held() != MinUnwritten {
		t.Fatalf("after a release: %v, held %d", err, u.held())
	}
	// 10,000 hits a second, written as they come: the bound becomes 800
	// (80 % of 100 ms of them: admitShare).
	u.release(u.held())
	clock = clock.Add(2 * time.Second) // the hits above out of the window
	for i := range 10 {
		if i > 0 {
			clock = clock.Add(CrashWindow)
		}
		for range 1000 {
			if err := u.acquire(ctx); err != nil {
				t.Fatal(err)
			}
			u.release(1)
		}
	}
	u.mu.Lock()
	limit := u.limit()
	u.mu.Unlock()
	if limit != 800 {
		t.Errorf("bound at 10,000 hits a second: %d, want 800", limit)
	}
	// A quiet second later it is back to the minimum.
	clock = clock.Add(2 * time.Second)
	u.mu.Lock()
	limit = u.limit()
	u.mu.Unlock()
	if limit != MinUnwritten {
		t.Errorf("bound after a quiet second: %d, want %d", limit, MinUnwritten)
	}
}

// TestWaitingAtTheBoundIsCountedAndHurries: a hit that waits at the bound
// closes the hurry signal (the writers write what they hold at once), is
// counted with the time it waited, and the next release opens a new
// signal.
func TestWaitingAtTheBoundIsCountedAndHurries(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	clock := time.Unix(1_800_000_000, 0)
	u := newUnwritten()
	u.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	ctx := context.Background()
	for range MinUnwritten {
		if err := u.acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n, d := u.backpressure(); n != 0 || d != 0 {
		t.Fatalf("below the bound: %d waits, %v waited; want none", n, d)
	}
	select {
	case <-u.hurried():
		t.Fatal("hurried before any hit waited")
	default:
	}
	got := make(chan error, 1)
	go func() { got <- u.acquire(ctx) }()
	<-u.hurried() // closed once the hit waits
	mu.Lock()
	clock = clock.Add(30 * time.Millisecond)
	mu.Unlock()
	u.release(1)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if n, d := u.backpressure(); n != 1 || d != 30*time.Millisecond {
		t.Errorf("one hit waited 30ms: counted %d waits, %v waited", n, d)
	}
	select {
	case <-u.hurried():
		t.Error("still hurried after the release let the waiting hit in")
	default:
	}
}
