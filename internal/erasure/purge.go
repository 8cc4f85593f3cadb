package erasure

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/erasure/internal/erasuredb"
	"github.com/linkqr/linkqr/internal/store"
)

// Batch sizes of the purge: each statement deletes at most BatchRows rows
// (through an index), in its own short transaction, so the hot tables are
// never locked for long whatever the workspace's size.
const (
	BatchRows  = 5000
	batchLinks = 200
)

// PurgeDelay is how long after a deletion its purge starts: scans accepted
// by a redirect just before the deletion are still being written (the
// scan buffer flushes within 100 ms), and rows written after the purge
// would outlive it.
const PurgeDelay = 30 * time.Second

// PurgeArgs is the job that removes deleted workspaces' rows. It runs
// every minute on a worker and right after each deletion.
type PurgeArgs struct{}

// Kind names the job in River's table.
func (PurgeArgs) Kind() string { return "workspace_purge" }

// PurgeWorker runs PurgeArgs jobs.
type PurgeWorker struct {
	river.WorkerDefaults[PurgeArgs]
	Service *Service
}

// Timeout: a run stops after purgeBudget and snoozes, so it never holds a
// worker for long; River's own timeout must not cut it first.
func (w *PurgeWorker) Timeout(*river.Job[PurgeArgs]) time.Duration { return 2 * purgeBudget }

const purgeBudget = 30 * time.Second

// Work purges for up to purgeBudget; what is left is taken by the next run
// a second later.
func (w *PurgeWorker) Work(ctx context.Context, _ *river.Job[PurgeArgs]) error {
	ctx, cancel := context.WithTimeout(ctx, purgeBudget)
	defer cancel()
	done, err := w.Service.Purge(ctx)
	if !done && (err == nil || ctx.Err() != nil) {
		return river.JobSnooze(time.Second)
	}
	return err
}

func (s *Service) delay() time.Duration {
	if s.PurgeDelay > 0 {
		return s.PurgeDelay
	}
	return PurgeDelay
}

// Purge removes the rows of workspaces deleted more than PurgeDelay ago,
// batch by batch, until none is left (done) or ctx ends.
func (s *Service) Purge(ctx context.Context) (done bool, err error) {
	before := time.Now().Add(-s.delay())
	ids, err := erasuredb.New().ErasureWorkspacesPending(ctx, s.db.Conn(ctx), &before)
	if err != nil {
		return false, store.InterpretError(err)
	}
	for _, id := range ids {
		if err := s.purgeWorkspace(ctx, id); err != nil {
			return false, err
		}
	}
	return len(ids) < 100, nil
}

// purgeWorkspace: per batch of links their scans and rollups, then the
// links themselves (their codes retired); then the workspace overview's
// rows (days and hours); then events (with their
// deliveries); then the workspace row, whose remaining small tables go by
// ON DELETE CASCADE.
func (s *Service) purgeWorkspace(ctx context.Context, ws uuid.UUID) error {
	q := erasuredb.New()
	for {
		links, err := q.ErasureLinkBatch(ctx, s.db.Conn(ctx), erasuredb.ErasureLinkBatchParams{WorkspaceID: ws, Limit: batchLinks})
		if err != nil {
			return store.InterpretError(err)
		}
		if len(links) == 0 {
			break
		}
		if err := s.purgeLinks(ctx, ws, links); err != nil {
			return err
		}
	}
	if err := drain(ctx, s.db, func(tx pgx.Tx) (int64, error) {
		return q.ErasureWorkspaceDaysDelete(ctx, tx, erasuredb.ErasureWorkspaceDaysDeleteParams{Ws: ws, Lim: BatchRows})
	}); err != nil {
		return err
	}
	if err := drain(ctx, s.db, func(tx pgx.Tx) (int64, error) {
		return q.ErasureWorkspaceHoursDelete(ctx, tx, erasuredb.ErasureWorkspaceHoursDeleteParams{Ws: ws, Lim: BatchRows})
	}); err != nil {
		return err
	}
	if err := drain(ctx, s.db, func(tx pgx.Tx) (int64, error) {
		return q.ErasureEventsDelete(ctx, tx, erasuredb.ErasureEventsDeleteParams{WorkspaceID: ws, Lim: BatchRows})
	}); err != nil {
		return err
	}
	if err := drain(ctx, s.db, func(tx pgx.Tx) (int64, error) {
		return audit.PurgeWorkspace(ctx, tx, ws, BatchRows)
	}); err != nil {
		return err
	}
	// The audit chain's head, and any entry written meanwhile, go by
	// ON DELETE CASCADE, which the audit trigger allows only so.
	return s.db.InTx(ctx, func(tx pgx.Tx) error {
		if err := audit.AllowPurge(ctx, tx); err != nil {
			return err
		}
		_, err := q.ErasureWorkspaceDelete(ctx, tx, ws)
		return store.InterpretError(err)
	})
}

func (s *Service) purgeLinks(ctx context.Context, ws uuid.UUID, links []uuid.UUID) error {
	q := erasuredb.New()
	for _, del := range []func(context.Context, erasuredb.DBTX, []uuid.UUID) (int64, error){
		func(ctx context.Context, db erasuredb.DBTX, l []uuid.UUID) (int64, error) {
			return q.ErasureScansDelete(ctx, db, erasuredb.ErasureScansDeleteParams{Links: l, Lim: BatchRows})
		},
		func(ctx context.Context, db erasuredb.DBTX, l []uuid.UUID) (int64, error) {
			return q.ErasureVisitorDaysDelete(ctx, db, erasuredb.ErasureVisitorDaysDeleteParams{Links: l, Lim: BatchRows})
		},
		func(ctx context.Context, db erasuredb.DBTX, l []uuid.UUID) (int64, error) {
			return q.ErasureRollupKeysHourlyDelete(ctx, db, erasuredb.ErasureRollupKeysHourlyDeleteParams{Links: l, Lim: BatchRows})
		},
		func(ctx context.Context, db erasuredb.DBTX, l []uuid.UUID) (int64, error) {
			return q.ErasureRollupKeysDailyDelete(ctx, db, erasuredb.ErasureRollupKeysDailyDeleteParams{Links: l, Lim: BatchRows})
		},
		func(ctx context.Context, db erasuredb.DBTX, l []uuid.UUID) (int64, error) {
			return q.ErasureRollupsDelete(ctx, db, erasuredb.ErasureRollupsDeleteParams{Links: l, Lim: BatchRows})
		},
	} {
		if err := drain(ctx, s.db, func(tx pgx.Tx) (int64, error) { return del(ctx, tx, links) }); err != nil {
			return err
		}
	}
	_, err := q.ErasureLinksRetire(ctx, s.db.Conn(ctx), erasuredb.ErasureLinksRetireParams{Links: links, WorkspaceID: ws})
	return store.InterpretError(err)
}

// drain runs one bounded delete per transaction until it deletes nothing.
func drain(ctx context.Context, db *store.DB, del func(pgx.Tx) (int64, error)) error {
	for {
		var n int64
		err := db.InTx(ctx, func(tx pgx.Tx) error {
			var err error
			n, err = del(tx)
			return store.InterpretError(err)
		})
		if err != nil || n == 0 {
			return err
		}
	}
}
