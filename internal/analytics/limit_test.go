package analytics

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestLimiterBoundsWorkspacesAndTheProcess(t *testing.T) {
	t.Parallel()
	l := newLimiter(Limits{PerWorkspace: 2, Global: 3, Wait: 20 * time.Millisecond})
	ctx := context.Background()
	a, b := uuid.New(), uuid.New()
	var releases []func()
	take := func(ws uuid.UUID) error {
		release, err := l.acquire(ctx, ws)
		if err == nil {
			releases = append(releases, release)
		}
		return err
	}
	if take(a) != nil || take(a) != nil {
		t.Fatal("a workspace could not run two reports")
	}
	var busy *BusyError
	if err := take(a); !errors.As(err, &busy) || busy.Seconds() != 1 {
		t.Fatalf("a third report of one workspace: %v, want a BusyError with Retry-After 1", err)
	}
	if err := take(b); err != nil {
		t.Fatalf("another workspace was refused: %v", err)
	}
	if err := take(uuid.New()); !errors.As(err, &busy) {
		t.Fatalf("a fourth report in a process capped at three: %v, want a BusyError", err)
	}
	releases[0]()
	if err := take(a); err != nil {
		t.Fatalf("a released slot was not reusable: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.acquire(cancelled, a); !errors.Is(err, context.Canceled) {
		t.Errorf("a caller that went away: %v, want context.Canceled", err)
	}
	for _, r := range releases[1:] {
		r()
	}
	if n := len(l.perW); n != 0 {
		t.Errorf("%d idle workspaces are still tracked", n)
	}
	if n := len(l.global); n != 0 {
		t.Errorf("%d global slots still taken", n)
	}
}
