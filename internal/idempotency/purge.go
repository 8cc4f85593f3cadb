package idempotency

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/store/dbsqlc"
)

// PurgeArgs is the periodic job that deletes keys older than 24 hours.
type PurgeArgs struct{}

// Kind names the job in River's table.
func (PurgeArgs) Kind() string { return "idempotency_purge" }

// PurgeWorker runs PurgeArgs jobs.
type PurgeWorker struct {
	river.WorkerDefaults[PurgeArgs]
	Pool *pgxpool.Pool
	Log  *slog.Logger
}

// Work deletes expired keys. Expired keys are already ignored by lookups,
// so a late purge only costs disk space.
func (w *PurgeWorker) Work(ctx context.Context, _ *river.Job[PurgeArgs]) error {
	n, err := Purge(ctx, w.Pool)
	if err != nil {
		return err
	}
	if n > 0 {
		w.Log.Info("purged expired idempotency keys", "count", n)
	}
	return nil
}

// Purge deletes every key older than 24 hours and returns how many.
func Purge(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	n, err := dbsqlc.New().IdempotencyKeyDeleteExpired(ctx, pool)
	return n, store.InterpretError(err)
}
