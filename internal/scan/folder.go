package scan

import (
	"cmp"
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/linkqr/linkqr/internal/store"
)

// DefaultFoldInterval is how often the folder folds the scans recorded
// since the watermark. It is the lag of scan_count and analytics (their
// as_of), and sets the cost: a longer window shares each rollup update
// among more scans of a link (docs/scan-pipeline.md). Under heavy load a
// fold takes longer and the next follows at once, so windows grow by
// themselves.
const DefaultFoldInterval = 5 * time.Second

// DefaultSaturatedFoldInterval is the longest window while the CPUs are
// contended (Folder.Busy): folding is work that yields to the redirect, by
// folding less often, which also makes it less work in total. Measured
// against 10,000 links rotating under wrk, a fold every 2 s held the
// redirect to 36,000 a second, every 5 minutes to 45,600
// (docs/scan-pipeline.md).
const DefaultSaturatedFoldInterval = 30 * time.Second

// Folder runs Fold periodically. Every instance may run one: the fold lock
// lets one of them fold at a time, and the others find nothing left or the
// lock taken.
type Folder struct {
	DB       *store.DB
	Log      *slog.Logger
	Interval time.Duration // default DefaultFoldInterval
	// Busy, when set, says whether the CPUs are contended (in linkqr,
	// priority.Governor.Contended); the folder then waits up to
	// SaturatedInterval (default DefaultSaturatedFoldInterval) between
	// folds.
	Busy              func() bool
	SaturatedInterval time.Duration
	// OnFold, when set, is told of every fold that took something (metrics).
	OnFold func(f Folded, took time.Duration)
	// OnError, when set, is told of every failed fold (metrics).
	OnError func(err error)

	asOf atomic.Int64 // Unix nanoseconds of the last finished fold's as_of
}

// Lag is how far the rollups are behind: the time since the as_of of the
// last fold this folder finished (since Run began, before the first; 0
// before that).
func (f *Folder) Lag() time.Duration {
	at := f.asOf.Load()
	if at == 0 {
		return 0
	}
	return time.Since(time.Unix(0, at))
}

// Run folds every Interval until ctx ends, and while Busy says the process
// is saturated, SaturatedInterval after the last fold ended. A fold that
// takes longer than the interval is followed by the next one at once while
// the process is not busy, so under heavy load the windows grow, and each
// fold adds more scans per row update; while it is busy, even a fold that
// took longer than the saturated interval is followed by a pause of that
// interval, not by another fold at once.
func (f *Folder) Run(ctx context.Context) {
	interval := cmp.Or(f.Interval, DefaultFoldInterval)
	saturated := max(interval, cmp.Or(f.SaturatedInterval, DefaultSaturatedFoldInterval))
	t := time.NewTicker(interval)
	defer t.Stop()
	began := time.Now()
	ended := began
	f.asOf.CompareAndSwap(0, began.UnixNano()) // the lag counts from here until a fold finishes
	for {
		var now time.Time
		select {
		case <-ctx.Done():
			return
		case now = <-t.C:
		}
		busy := f.Busy != nil && f.Busy()
		if !foldDue(now.Sub(began), now.Sub(ended), interval, saturated, busy) {
			continue
		}
		began = now // ticks are interval apart: the next one is due
		f.Fold(ctx)
		ended = time.Now()
	}
}

// foldDue says whether a fold is due: the interval after the last one
// began, or while the process is busy, the saturated interval after it
// ended. (Counted from its beginning, a fold that had taken longer than
// the saturated interval — a long one, under that very load — was followed
// by the next at once, in the middle of the load it should yield to.)
func foldDue(sinceBegan, sinceEnded, interval, saturated time.Duration, busy bool) bool {
	if busy {
		return sinceEnded >= saturated
	}
	return sinceBegan >= interval
}

// Fold runs one fold now and reports it; errors are logged (the watermark
// stays, and the next fold takes the same scans).
func (f *Folder) Fold(ctx context.Context) (Folded, error) {
	start := time.Now()
	res, err := Fold(ctx, f.DB)
	if err == nil && !res.AsOf.IsZero() {
		f.asOf.Store(res.AsOf.UnixNano())
	}
	switch {
	case err != nil && ctx.Err() == nil:
		f.Log.Error("folding scans into analytics failed; the next fold retries", "err", err)
		if f.OnError != nil {
			f.OnError(err)
		}
	case err == nil && res.Rows > 0 && f.OnFold != nil:
		f.OnFold(res, time.Since(start))
	}
	return res, err
}
