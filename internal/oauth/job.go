package oauth

import (
	"context"
	"time"

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

// Work rotates keys when due and deletes codes expired for an hour and
// expired refresh tokens (both are refused by their expiry anyway).
func (w *RotateWorker) Work(ctx context.Context, _ *river.Job[RotateArgs]) error {
	if err := w.Service.EnsureKeys(ctx); err != nil {
		return err
	}
	q, db, now := dbsqlc.New(), w.Service.db.Conn(ctx), w.Service.now()
	if _, err := q.OAuthCodePurge(ctx, db, now.Add(-time.Hour)); err != nil {
		return store.InterpretError(err)
	}
	_, err := q.OAuthRefreshPurge(ctx, db, now)
	return store.InterpretError(err)
}
