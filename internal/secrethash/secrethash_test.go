package secrethash_test

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/budget"
	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

type result struct {
	release func()
	err     error
}

// acquireAsync starts an Acquire in a goroutine; its outcome arrives on the
// returned channel.
func acquireAsync(ctx context.Context, l *secrethash.Limiter) <-chan result {
	ch := make(chan result, 1)
	go func() {
		rel, err := l.Acquire(ctx, uuid.Nil)
		ch <- result{rel, err}
	}()
	return ch
}

func receive(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("Acquire did not return")
		return result{}
	}
}

func mustAcquire(t *testing.T, l *secrethash.Limiter) func() {
	t.Helper()
	rel, err := l.Acquire(context.Background(), uuid.Nil)
	if err != nil {
		t.Fatalf("acquire a free slot: %v", err)
	}
	return rel
}

func TestLimiterSlotsThenQueueThenBusy(t *testing.T) {
	t.Parallel()
	const slots, queue = 2, 3
	l := secrethash.NewLimiter(slots, queue, time.Minute)
	var held []func()
	for range slots {
		held = append(held, mustAcquire(t, l))
	}
	var waiters []<-chan result
	for range queue {
		waiters = append(waiters, acquireAsync(context.Background(), l))
	}
	wait.For(t, 10*time.Second, func() bool { _, w := l.InUse(); return w == queue }, "the queue to fill")

	// Everyone beyond slots+queue is refused at once, without waiting.
	for i := range 4 {
		if rel, err := l.Acquire(context.Background(), uuid.Nil); !errors.Is(err, secrethash.ErrBusy) {
			if rel != nil {
				rel()
			}
			t.Fatalf("caller %d beyond slots and queue: %v, want ErrBusy", slots+queue+i+1, err)
		}
	}
	for _, w := range waiters {
		select {
		case r := <-w:
			t.Fatalf("a queued caller returned while every slot was held: %v", r.err)
		default:
		}
	}

	// Freeing one slot lets exactly one waiter through.
	held[0]()
	got := -1
	wait.For(t, 10*time.Second, func() bool {
		for i, w := range waiters {
			select {
			case r := <-w:
				if r.err != nil {
					t.Fatalf("waiter %d: %v", i, r.err)
				}
				held[0], got = r.release, i
				return true
			default:
			}
		}
		return false
	}, "a waiter to take the freed slot")
	if running, waiting := l.InUse(); running != slots || waiting != queue-1 {
		t.Fatalf("after one waiter proceeded: %d running, %d waiting; want %d, %d", running, waiting, slots, queue-1)
	}
	// The queue has room for one again.
	extra := acquireAsync(context.Background(), l)
	wait.For(t, 10*time.Second, func() bool { _, w := l.InUse(); return w == queue }, "the freed queue place to be taken")

	for _, rel := range held {
		rel()
	}
	for i, w := range append(waiters, extra) {
		if i == got {
			continue
		}
		r := receive(t, w)
		if r.err != nil {
			t.Fatalf("waiter %d after slots freed: %v", i, r.err)
		}
		r.release()
	}
	if running, waiting := l.InUse(); running != 0 || waiting != 0 {
		t.Fatalf("after everything was released: %d running, %d waiting", running, waiting)
	}
}

func TestLimiterCancelledWaiterLeavesTheQueue(t *testing.T) {
	t.Parallel()
	l := secrethash.NewLimiter(1, 1, time.Minute)
	rel := mustAcquire(t, l)
	defer func() { rel() }()
	ctx, cancel := context.WithCancel(context.Background())
	w := acquireAsync(ctx, l)
	wait.For(t, 10*time.Second, func() bool { _, n := l.InUse(); return n == 1 }, "the waiter to queue")
	if _, err := l.Acquire(context.Background(), uuid.Nil); !errors.Is(err, secrethash.ErrBusy) {
		t.Fatalf("with the queue full: %v, want ErrBusy", err)
	}
	cancel()
	if r := receive(t, w); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v, want context.Canceled", r.err)
	}
	if _, n := l.InUse(); n != 0 {
		t.Fatalf("%d waiting after the only waiter was cancelled", n)
	}
	// Its place is free for the next caller, who waits instead of being refused.
	next := acquireAsync(context.Background(), l)
	wait.For(t, 10*time.Second, func() bool { _, n := l.InUse(); return n == 1 }, "the next caller to queue")
	rel()
	r := receive(t, next)
	if r.err != nil {
		t.Fatalf("next caller: %v", r.err)
	}
	rel = r.release
}

func TestLimiterWaitIsBounded(t *testing.T) {
	t.Parallel()
	l := secrethash.NewLimiter(1, 4, 20*time.Millisecond)
	rel := mustAcquire(t, l)
	defer rel()
	if _, err := l.Acquire(context.Background(), uuid.Nil); !errors.Is(err, secrethash.ErrBusy) {
		t.Fatalf("slot held beyond the wait: %v, want ErrBusy", err)
	}
	if _, n := l.InUse(); n != 0 {
		t.Fatalf("%d still waiting after the wait ran out", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Acquire(ctx, uuid.Nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("ended context: %v", err)
	}
}

// Hash, Compare and Dummy all take a slot of the process-wide limiter. Not
// parallel: it replaces that limiter.
func TestHashCompareDummyShareTheProcessCap(t *testing.T) {
	ctx := context.Background()
	h, err := secrethash.Hash(ctx, uuid.Nil, "correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := secrethash.Compare(ctx, uuid.Nil, "correct horse battery staple", h); err != nil || !ok {
		t.Fatalf("right secret: %v %v", ok, err)
	}
	if ok, err := secrethash.Compare(ctx, uuid.Nil, "wrong horse battery staple", h); err != nil || ok {
		t.Fatalf("wrong secret: %v %v", ok, err)
	}
	if err := secrethash.Dummy(ctx, "anything"); err != nil {
		t.Fatal(err)
	}

	l := secrethash.NewLimiter(1, 0, time.Minute)
	defer secrethash.SetProcess(l)()
	rel := mustAcquire(t, l)
	if _, err := secrethash.Hash(ctx, uuid.Nil, "x"); !errors.Is(err, secrethash.ErrBusy) {
		t.Errorf("Hash with the cap taken: %v", err)
	}
	if _, err := secrethash.Compare(ctx, uuid.Nil, "x", h); !errors.Is(err, secrethash.ErrBusy) {
		t.Errorf("Compare with the cap taken: %v", err)
	}
	if err := secrethash.Dummy(ctx, "x"); !errors.Is(err, secrethash.ErrBusy) {
		t.Errorf("Dummy with the cap taken: %v", err)
	}
	rel()
	if ok, err := secrethash.Compare(ctx, uuid.Nil, "correct horse battery staple", h); err != nil || !ok {
		t.Fatalf("after the slot was freed: %v %v", ok, err)
	}
}

func TestDefaultLimiterIsSizedForTheMachine(t *testing.T) {
	t.Parallel()
	if got, want := secrethash.DefaultLimiter().Slots(), max(1, runtime.GOMAXPROCS(0)); got != want {
		t.Fatalf("%d slots, want GOMAXPROCS = %d", got, want)
	}
}

// A run for a workspace takes that workspace's share of the slots: beyond
// it ErrBusy says 429 (the workspace should slow down) while another
// workspace still runs; a run for no workspace is bound by the process
// alone, and beyond the process ErrBusy says 503.
func TestLimiterWorkspaceShare(t *testing.T) {
	t.Parallel()
	limits := budget.Limits()
	limits[budget.Hash] = budget.Limit{Process: 3, Workspace: 1, RetryAfter: time.Second, What: "credential checks running"}
	l := secrethash.OnBudgets(budget.New(limits))
	a, b := uuid.New(), uuid.New()
	relA, err := l.Acquire(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Acquire(context.Background(), a)
	if !errors.Is(err, secrethash.ErrBusy) || secrethash.Status(err) != http.StatusTooManyRequests {
		t.Fatalf("a's second run: %v (status %d), want ErrBusy as the workspace's (429)", err, secrethash.Status(err))
	}
	relB := mustAcquireFor(t, l, b)
	relNone := mustAcquireFor(t, l, uuid.Nil)
	_, err = l.Acquire(context.Background(), uuid.Nil)
	if !errors.Is(err, secrethash.ErrBusy) || secrethash.Status(err) != http.StatusServiceUnavailable {
		t.Fatalf("a run for no workspace with every slot taken: %v (status %d), want ErrBusy as the server's (503)", err, secrethash.Status(err))
	}
	relA()
	relB()
	relNone()
}

func mustAcquireFor(t *testing.T, l *secrethash.Limiter, ws uuid.UUID) func() {
	t.Helper()
	rel, err := l.Acquire(context.Background(), ws)
	if err != nil {
		t.Fatalf("acquire for %v: %v", ws, err)
	}
	return rel
}
