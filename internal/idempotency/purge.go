package idempotency

import (
	"context"
	"log/slog"

	"github.com/riverqueue/river"

	"github.com/linkqr/linkqr/internal/store"
)

// PurgeArgs is the periodic job that deletes keys older than 24 hours.
type PurgeArgs struct{}

// Kind names the job in River's table.
func (PurgeArgs) Kind() string { return "idempotency_purge" }

// PurgeWorker runs PurgeArgs jobs.
type PurgeWorker struct {
	river.WorkerDefaults[PurgeArgs]
	DB  *store.DB
	Log *slog.Logger
}

// Work deletes expired keys. Expired keys are already ignored by lookups,
// so a late purge only costs disk space.
func (w *PurgeWorker) Work(ctx context.Context, _ *river.Job[PurgeArgs]) error {
	n, err := Purge(ctx, w.DB)
	if err != nil {
		return err
	}
	if n > 0 {
		w.Log.Info("purged expired idempotency keys", "count", n)
	}
	return nil
}
