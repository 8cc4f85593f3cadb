package analytics

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/budget"
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
	if err := take(a); !errors.As(err, &busy) || busy.Seconds() != 1 || busy.HTTPStatus() != 429 {
		t.Fatalf("a third report of one workspace: %v, want a BusyError 429 with Retry-After 1", err)
	}
	if err := take(b); err != nil {
		t.Fatalf("another workspace was refused: %v", err)
	}
	if err := take(uuid.New()); !errors.As(err, &busy) || busy.HTTPStatus() != 503 {
		t.Fatalf("a fourth report in a process capped at three: %v, want a BusyError 503", err)
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
	if st := l.b.Stats(budget.Analytics); st.InUse != 0 || st.Waiting != 0 {
		t.Errorf("after every release: %+v", st)
	}
}
