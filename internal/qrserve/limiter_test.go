package qrserve

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/budget"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// result waits for one goroutine's outcome, failing instead of hanging.
func result(t *testing.T, ch <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return", what)
		return nil
	}
}

func acquireAsync(ctx context.Context, l *limiter) <-chan error {
	ch := make(chan error, 1)
	go func() {
		release, err := l.acquire(ctx, uuid.Nil)
		if err == nil {
			defer release()
		}
		ch <- err
	}()
	return ch
}

func TestLimiterQueueFullIsBusy(t *testing.T) {
	l := newLimiter(1, 1, time.Minute, 1500*time.Millisecond)
	release, err := l.acquire(context.Background(), uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	waiter := acquireAsync(context.Background(), l)
	wait.For(t, 10*time.Second, func() bool { return l.waiting() == 1 }, "the second request to queue")

	_, err = l.acquire(context.Background(), uuid.Nil)
	var busy *BusyError
	if !errors.Is(err, ErrBusy) || !errors.As(err, &busy) || busy.Seconds() != 2 {
		t.Fatalf("third request: %v, want *BusyError retrying in 2 s", err)
	}
	release()
	if err := result(t, waiter, "the queued request"); err != nil {
		t.Fatalf("queued request after release: %v", err)
	}
}

func TestLimiterWaiterGetsItsTurn(t *testing.T) {
	l := newLimiter(1, 4, time.Minute, time.Second)
	release, err := l.acquire(context.Background(), uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	waiter := acquireAsync(context.Background(), l)
	wait.For(t, 10*time.Second, func() bool { return l.waiting() == 1 }, "the request to queue")
	select {
	case err := <-waiter:
		t.Fatalf("queued request returned (%v) while the only slot was held", err)
	default:
	}
	release()
	if err := result(t, waiter, "the queued request"); err != nil {
		t.Fatalf("queued request: %v", err)
	}
	if l.waiting() != 0 {
		t.Fatalf("%d still queued", l.waiting())
	}
}

func TestLimiterWaitIsBounded(t *testing.T) {
	l := newLimiter(1, 4, 20*time.Millisecond, time.Second)
	release, err := l.acquire(context.Background(), uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := result(t, acquireAsync(context.Background(), l), "the queued request"); !errors.Is(err, ErrBusy) {
		t.Fatalf("after MaxWait: %v, want ErrBusy", err)
	}
	if l.waiting() != 0 {
		t.Fatalf("a timed-out request kept its queue place")
	}
}

// TestLimiterCancelFreesQueuePlace: a client that gives up while queued
// leaves at once and its place goes to the next request.
func TestLimiterCancelFreesQueuePlace(t *testing.T) {
	l := newLimiter(1, 1, time.Minute, time.Second)
	release, err := l.acquire(context.Background(), uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gaveUp := acquireAsync(ctx, l)
	wait.For(t, 10*time.Second, func() bool { return l.waiting() == 1 }, "the request to queue")
	if _, err := l.acquire(context.Background(), uuid.Nil); !errors.Is(err, ErrBusy) {
		t.Fatalf("queue full: %v, want ErrBusy", err)
	}
	cancel()
	if err := result(t, gaveUp, "the cancelled request"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request: %v", err)
	}
	wait.For(t, 10*time.Second, func() bool { return l.waiting() == 0 }, "the queue place to be freed")
	next := acquireAsync(context.Background(), l)
	wait.For(t, 10*time.Second, func() bool { return l.waiting() == 1 }, "the next request to queue")
	release()
	if err := result(t, next, "the next request"); err != nil {
		t.Fatalf("next request: %v", err)
	}
	if _, err := l.acquire(ctx, uuid.Nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire with a cancelled context: %v", err)
	}
}

func TestBusyErrorSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int{0: 1, time.Millisecond: 1, time.Second: 1, 1001 * time.Millisecond: 2, 2 * time.Second: 2} {
		if got := (&BusyError{RetryAfter: d}).Seconds(); got != want {
			t.Errorf("RetryAfter %s: %d s, want %d", d, got, want)
		}
	}
}

// TestLimiterWorkspaceShare: a workspace that holds its share of the
// render slots is refused as the workspace (429) while another workspace
// still renders; when the process's slots are all taken, a render is
// refused as the server's (503).
func TestLimiterWorkspaceShare(t *testing.T) {
	limits := budget.Limits()
	limits[budget.Render] = budget.Limit{Process: 2, Workspace: 1, RetryAfter: time.Second, What: "QR codes being rendered"}
	l := onBudgets(budget.New(limits))
	a, b := uuid.New(), uuid.New()
	relA, err := l.acquire(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	defer relA()
	var busy *BusyError
	if _, err := l.acquire(context.Background(), a); !errors.As(err, &busy) || busy.Status() != http.StatusTooManyRequests {
		t.Fatalf("a's second render: %v, want refused as the workspace's (429)", err)
	}
	relB, err := l.acquire(context.Background(), b)
	if err != nil {
		t.Fatalf("b's render while a holds its share: %v", err)
	}
	defer relB()
	if _, err := l.acquire(context.Background(), uuid.New()); !errors.As(err, &busy) || busy.Status() != http.StatusServiceUnavailable {
		t.Fatalf("a third workspace's render with every slot taken: %v, want refused as the server's (503)", err)
	}
}
