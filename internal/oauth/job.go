package oauth

import (
	"context"

	"github.com/riverqueue/river"
)

// RotateArgs is the periodic job that keeps the signing keys rotating (see
// EnsureKeys). It runs hourly; a rotation happens when the current key has
// signed for RotateEvery. Expired codes and refresh tokens are deleted by
// the retention jobs (internal/retention).
type RotateArgs struct{}

// Kind names the job in River's table.
func (RotateArgs) Kind() string { return "oauth_key_rotation" }

// RotateWorker runs RotateArgs jobs.
type RotateWorker struct {
	river.WorkerDefaults[RotateArgs]
	Service *Service
}

// Work rotates keys when due.
func (w *RotateWorker) Work(ctx context.Context, _ *river.Job[RotateArgs]) error {
	return w.Service.EnsureKeys(ctx)
}
