package analytics_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/priority"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

// While the redirect is busy and the report pace is spent, a report waits
// at most the analytics wait and is refused with Retry-After; when the
// redirect calms down, reports run again.
func TestReportsYieldToABusyRedirect(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	ws := testkit.NewTenant(t, pool).WorkspaceID
	linkID := testkit.Link(t, pool, &testkit.LinkOpts{WorkspaceID: ws})
	gov, latency := priority.SaturatedGovernor()
	pace := priority.NewBudget(gov, 0.001, 10) // 10 ms of reports, then 1 ms per 1,000 s
	if ok, _ := pace.Acquire(context.Background(), 10, 0); !ok {
		t.Fatal("the pace's burst was refused")
	}
	limits := analytics.DefaultLimits()
	limits.Wait, limits.Pace = 50*time.Millisecond, pace
	reports := analytics.NewReports(store.NewDB(pool), limits)
	to := time.Now().UTC().Truncate(time.Hour)
	r := analytics.Range{From: to.Add(-24 * time.Hour), To: to, Interval: analytics.Hour}

	_, err := reports.Compute(context.Background(), ws, linkID, r)
	var busy *analytics.BusyError
	if !errors.As(err, &busy) || busy.Seconds() != 1 || !strings.Contains(busy.Reason, "yields") {
		t.Fatalf("a report with the redirect busy and the pace spent: %v; want a BusyError (Retry-After 1) saying analytics yields", err)
	}

	latency.Set(0)
	for range 10 { // a calm second
		gov.Sample()
	}
	rep, err := reports.Compute(context.Background(), ws, linkID, r)
	if err != nil {
		t.Fatalf("a report with the redirect calm: %v", err)
	}
	if len(rep.Series) != 24 {
		t.Errorf("series of %d buckets, want 24", len(rep.Series))
	}
}
