package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/notify"
)

// RunListener runs l until the test ends (the cleanup waits for it to
// stop) and returns once it listens, with the context it runs in, which
// ends with the test.
func RunListener(t testing.TB, l *notify.Listener) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-l.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("testkit: the listener is not ready after 10 s")
	}
	return ctx
}
