package notify_test

import (
	"context"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/notify"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// Heard returns once the listener has its own NOTIFY back: at once when it
// already came, when it comes, and never for one that was not sent (the
// caller's deadline ends the wait).
func TestHeardWaitsForTheEcho(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	l := notify.New(pool, testkit.Logger(t))
	got := make(chan string, 16)
	l.Subscribe("echo_test", notify.Handler{Notify: func(p string) { got <- p }, Reset: func() {}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go l.Run(ctx)
	<-l.Ready()

	send := func(payload string) {
		if _, err := pool.Exec(ctx, "SELECT pg_notify('echo_test', $1)", payload); err != nil {
			t.Fatal(err)
		}
	}
	before := time.Now()
	send("a")
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	l.Heard(wctx, "echo_test", "a", before)
	if wctx.Err() != nil {
		t.Fatal("the echo of a NOTIFY sent was not heard")
	}
	wcancel()
	if p := <-got; p != "a" { // the handler ran before Heard returned
		t.Fatalf("handler got %q", p)
	}

	// Already heard since before: returns without waiting for anything.
	wctx, wcancel = context.WithTimeout(ctx, 10*time.Second)
	l.Heard(wctx, "echo_test", "a", before)
	if wctx.Err() != nil {
		t.Fatal("an echo already heard made Heard wait")
	}
	wcancel()

	// Never sent: only the deadline ends the wait.
	wctx, wcancel = context.WithTimeout(ctx, 200*time.Millisecond)
	defer wcancel()
	l.Heard(wctx, "echo_test", "never", time.Now())
	if wctx.Err() == nil {
		t.Fatal("Heard returned for a payload never sent")
	}
}
