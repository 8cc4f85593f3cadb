package scan

import (
	"context"
	"log/slog"
	"time"

	"github.com/linkqr/linkqr/internal/store"
)

// DefaultFoldInterval is how often the folder takes the queue. Reads add
// the queue to the rollups, so it sets no lag, only a cost: one row update
// per distinct (link, hour, key) per window, so a longer window shares
// each update among more scans, while the queue (and the raw hours reports
// read for links with queued scans) grows with it. Against 10,000 links
// rotating, a fold every 2 s ran back to back; every 15 s it took about a
// fifth of the interval (docs/scan-pipeline.md).
const DefaultFoldInterval = 15 * time.Second

// Folder runs Fold periodically. Every instance may run one: the fold lock
// lets one of them fold at a time, and the others find the queue empty or
// the lock taken.
type Folder struct {
	DB       *store.DB
	Log      *slog.Logger
	Interval time.Duration // default DefaultFoldInterval
	// OnFold, when set, is told of every fold that took something (metrics).
	OnFold func(f Folded, took time.Duration)
	// OnError, when set, is told of every failed fold (metrics).
	OnError func(err error)
}

// Run folds every Interval until ctx ends. A fold that takes longer than
// the interval is followed by the next one at once, so under heavy load
// the windows grow, and each fold adds more scans per row update.
func (f *Folder) Run(ctx context.Context) {
	interval := f.Interval
	if interval <= 0 {
		interval = DefaultFoldInterval
	}
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		start := time.Now()
		f.Fold(ctx)
		t.Reset(max(0, interval-time.Since(start)))
	}
}

// Fold runs one fold now and reports it; errors are logged (the queue
// keeps the scans, and the next fold takes them).
func (f *Folder) Fold(ctx context.Context) (Folded, error) {
	start := time.Now()
	res, err := Fold(ctx, f.DB)
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
