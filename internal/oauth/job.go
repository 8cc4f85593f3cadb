package oauth

import (
	"context"

	"github.com/riverqueue/river"

	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/store/dbsqlc"
)

// RotateArgs is the periodic job that keeps the signing keys rotating (see
// EnsureKeys) and purges expired authorization codes. It runs hourly; a
// rotation happens when the current key has signed for RotateEvery.
type RotateArgs struct{}

// Kind names the job in River's table.
func (RotateArgs) Kind() string { return "oauth_key_rotation" }

// RotateWorker runs RotateArgs jobs.
type RotateWorker struct {
	river.WorkerDefaults[RotateArgs]
	Service *Service
}

// Work rotates keys when due and deletes codes expired for an hour.
func (w *RotateWorker) Work(ctx context.Context, _ *river.Job[RotateArgs]) error {
	if err := w.Service.EnsureKeys(ctx); err != nil {
		return err
	}
	_, err := dbsqlc.New().OAuthCodePurge(ctx, w.Service.db.Conn(ctx), w.Service.now().Add(-CodeTTL-3600e9))
	return store.InterpretError(err)
}
