package budget_test

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/budget"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

func table(l budget.Limit) budget.Table {
	t := budget.Limits()
	t[budget.Logo] = l
	return t
}

func refusal(t *testing.T, err error, status int) {
	t.Helper()
	var r *budget.Refused
	if !errors.As(err, &r) {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if r.Status != status || r.Seconds() < 1 || r.Reason == "" {
		t.Fatalf("refusal = %+v, want status %d with a reason and Retry-After", r, status)
	}
}

// A workspace that has its share gets 429; the process, once every
// workspace's work fills it, 503 for the others; what is given back is
// admitted again.
func TestLimitSharesAndProcess(t *testing.T) {
	b := budget.New(table(budget.Limit{Process: 100, Workspace: 60, What: "images being decoded"}))
	ctx := context.Background()
	a, c, d := uuid.New(), uuid.New(), uuid.New()
	relA, err := b.Admit(ctx, budget.Logo, a, 50)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Admit(ctx, budget.Logo, a, 20) // 70 > a's 60
	refusal(t, err, http.StatusTooManyRequests)
	relC, err := b.Admit(ctx, budget.Logo, c, 40)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Admit(ctx, budget.Logo, d, 20) // 110 > the process's 100
	refusal(t, err, http.StatusServiceUnavailable)
	relA()
	relA() // a second call gives nothing back twice
	if got := b.Stats(budget.Logo).InUse; got != 40 {
		t.Fatalf("in use after release = %d, want 40", got)
	}
	relD, err := b.Admit(ctx, budget.Logo, d, 20)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	relD()
	relC()
	// A cost above the share is charged as the whole share: it runs alone.
	rel, err := b.Admit(ctx, budget.Logo, a, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Stats(budget.Logo).InUse; got != 60 {
		t.Fatalf("huge cost charged %d, want the share 60", got)
	}
	rel()
}

// A request that does not fit waits in the queue and is admitted when
// room is given back; a full queue refuses at once.
func TestLimitQueue(t *testing.T) {
	b := budget.New(table(budget.Limit{Process: 1, Queue: 1, Wait: time.Hour, What: "x"}))
	ctx := context.Background()
	rel, err := b.Admit(ctx, budget.Logo, uuid.Nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		r, err := b.Admit(ctx, budget.Logo, uuid.Nil, 1)
		if err == nil {
			r()
		}
		done <- err
	}()
	wait.For(t, 10*time.Second, func() bool { return b.Stats(budget.Logo).Waiting > 0 }, "the second request to queue")
	_, err = b.Admit(ctx, budget.Logo, uuid.Nil, 1) // the queue's one place is taken
	refusal(t, err, http.StatusServiceUnavailable)
	rel()
	if err := <-done; err != nil {
		t.Fatalf("queued request: %v", err)
	}
	if s := b.Stats(budget.Logo); s.InUse != 0 || s.Waiting != 0 || s.Admitted != 2 || s.Refusals != 1 {
		t.Fatalf("stats = %+v", s)
	}
}

// A waiter is refused when its wait runs out, and leaves on ctx's end.
func TestLimitWaitEnds(t *testing.T) {
	b := budget.New(table(budget.Limit{Process: 1, Workspace: 1, Queue: 4, Wait: time.Millisecond, What: "x"}))
	ws := uuid.New()
	rel, err := b.Admit(context.Background(), budget.Logo, ws, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer rel()
	_, err = b.Admit(context.Background(), budget.Logo, ws, 1)
	refusal(t, err, http.StatusTooManyRequests)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Admit(ctx, budget.Logo, ws, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if s := b.Stats(budget.Logo); s.Waiting != 0 {
		t.Fatalf("waiting = %d after the waits ended", s.Waiting)
	}
}

// The default shares of the CPU-bound classes leave other workspaces room
// once the machine has it: on 8 cores a workspace renders 2 of the 4
// render slots and runs 4 of the 8 argon2id slots; on 1 or 2 cores it may
// take the one render slot. Not parallel: it changes GOMAXPROCS.
func TestDefaultSharesOfRendersAndHashes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct {
		cores                                        int
		renders, renderShare, renderQueue, hashShare int64
	}{
		{1, 1, 1, 16, 1},
		{2, 1, 1, 16, 1},
		{8, 4, 2, 64, 4},
	} {
		runtime.GOMAXPROCS(c.cores)
		l := budget.Limits()
		r, h := l[budget.Render], l[budget.Hash]
		if r.Process != c.renders || r.Workspace != c.renderShare || int64(r.Queue) != c.renderQueue || h.Process != int64(c.cores) || h.Workspace != c.hashShare {
			t.Errorf("%d cores: render %d (share %d, queue %d), hash %d (share %d); want render %d (share %d, queue %d), hash %d (share %d)",
				c.cores, r.Process, r.Workspace, r.Queue, h.Process, h.Workspace, c.renders, c.renderShare, c.renderQueue, c.cores, c.hashShare)
		}
	}
}
