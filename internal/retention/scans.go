package retention

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/linkqr/linkqr/internal/retention/internal/retentiondb"
	"github.com/linkqr/linkqr/internal/store"
)

// scans deletes raw scans past their workspace's retention: whole months,
// counted back from the start of the current UTC month, so with 13 months
// a month's scans go once the month ended 13 months ago. Where every
// workspace's retention allows it, whole monthly partitions are dropped
// (no row-by-row delete, no dead rows to vacuum); a workspace with a
// shorter retention than others has its older scans deleted in batches.
// Rollups stay: before a workspace's scans go, its scans_purged_before
// moves past them, so a rebuild keeps the rollups below it
// (db/migrations/00024_retention.sql). Scans the fold has not passed stay
// until it has.
func (r *run) scans(ctx context.Context) error {
	q, conn := retentiondb.New(), r.p.DB.Conn(ctx)
	workspaces, err := q.RetentionScanWorkspaces(ctx, conn)
	if err != nil {
		return store.InterpretError(err)
	}
	month := time.Date(r.now.Year(), r.now.Month(), 1, 0, 0, 0, 0, time.UTC)
	cutoff := func(months *int32) time.Time {
		n := r.p.Policy.ScanMonths
		if months != nil {
			n = int(*months)
		}
		return month.AddDate(0, -n, 0)
	}
	// Partitions ending before every workspace's cutoff can go whole.
	dropBefore := cutoff(nil)
	ids := make([]uuid.UUID, len(workspaces))
	for i, w := range workspaces {
		ids[i] = w.ID
		if i == 0 || cutoff(w.ScanRetentionMonths).Before(dropBefore) {
			dropBefore = cutoff(w.ScanRetentionMonths)
		}
	}
	if err := r.advanceHorizon(ctx, ids, dropBefore); err != nil {
		return err
	}
	if err := r.dropPartitions(ctx, dropBefore); err != nil {
		return err
	}
	// The default partition only catches scans when a month's partition
	// was missing; its old rows go in batches too.
	err = r.batches(ctx, "scans", r.budget(), func(ctx context.Context, lim int32) (int64, error) {
		tag, err := r.p.DB.Conn(ctx).Exec(ctx, defaultPartitionBeforeSQL, dropBefore, lim)
		return tag.RowsAffected(), err
	})
	if err != nil {
		return err
	}
	budget := r.budget() // shared by the workspaces
	for _, w := range workspaces {
		before := cutoff(w.ScanRetentionMonths)
		if *budget == 0 {
			break // the next run goes on
		}
		if !before.After(dropBefore) {
			continue
		}
		if err := r.advanceHorizon(ctx, []uuid.UUID{w.ID}, before); err != nil {
			return err
		}
		err := r.batches(ctx, "scans", budget, func(ctx context.Context, lim int32) (int64, error) {
			return q.RetentionScansBefore(ctx, r.p.DB.Conn(ctx), retentiondb.RetentionScansBeforeParams{WorkspaceID: w.ID, Before: before, Lim: lim})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// advanceHorizon moves the workspaces' scans_purged_before to before
// (never back) under the fold lock, before any of their scans below it
// goes (RetentionScanFoldLock says why).
func (r *run) advanceHorizon(ctx context.Context, ids []uuid.UUID, before time.Time) error {
	return r.p.DB.InTx(ctx, func(tx pgx.Tx) error {
		q := retentiondb.New()
		if err := q.RetentionScanFoldLock(ctx, tx); err != nil {
			return store.InterpretError(err)
		}
		return store.InterpretError(q.RetentionScanHorizonAdvance(ctx, tx, retentiondb.RetentionScanHorizonAdvanceParams{Before: before, WorkspaceIds: ids}))
	})
}

// partition is one monthly partition of scans.
type partition struct {
	name     string
	from, to time.Time
}

// dropPartitions drops every monthly partition that ends at or before
// before, unless it still holds scans the fold has not passed.
func (r *run) dropPartitions(ctx context.Context, before time.Time) error {
	rows, err := r.p.DB.Conn(ctx).Query(ctx, partitionsSQL)
	if err != nil {
		return store.InterpretError(err)
	}
	parts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (partition, error) {
		var p partition
		err := row.Scan(&p.name, &p.from, &p.to)
		return p, err
	})
	if err != nil {
		return store.InterpretError(err)
	}
	for _, p := range parts {
		if p.to.After(before) {
			break // ordered by range
		}
		if err := r.dropPartition(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// dropPartition detaches and drops one partition in one transaction.
// Detaching takes an ACCESS EXCLUSIVE lock on scans (DETACH … CONCURRENTLY
// is not allowed beside a default partition): the lock is held for
// milliseconds, and lock_timeout bounds how long the scan writer can queue
// behind the attempt; a partition not dropped now is dropped on a later run.
func (r *run) dropPartition(ctx context.Context, p partition) error {
	name := pgx.Identifier{p.name}.Sanitize()
	var total, unfolded int64
	err := r.p.DB.Conn(ctx).QueryRow(ctx, fmt.Sprintf(
		`SELECT count(*), count(*) FILTER (WHERE xid >= (SELECT folded_below FROM scan_fold_state)) FROM %s`, name)).Scan(&total, &unfolded)
	if err != nil {
		return store.InterpretError(err)
	}
	if unfolded > 0 {
		r.log("scan partition kept: it holds scans not folded yet", "partition", p.name, "unfolded", unfolded)
		return nil
	}
	err = r.p.DB.InTx(ctx, func(tx pgx.Tx) error {
		for _, stmt := range []string{
			`SET LOCAL lock_timeout = '500ms'`,
			`ALTER TABLE scans DETACH PARTITION ` + name,
			`DROP TABLE ` + name,
		} {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if lockTimedOut(err) {
			r.log("scan partition not dropped this run: scans was busy", "partition", p.name)
			return nil
		}
		return fmt.Errorf("drop scan partition %s: %w", p.name, store.InterpretError(err))
	}
	r.count("scans", total)
	r.log("scan partition dropped", "partition", p.name, "rows", total)
	return nil
}

// lockTimedOut reports a statement that gave up waiting for a lock
// (lock_timeout: lock_not_available).
func lockTimedOut(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

func (r *run) log(msg string, args ...any) {
	if r.p.Log != nil {
		r.p.Log.Info(msg, args...)
	}
}

// partitionsSQL lists the monthly partitions of scans, oldest first, with
// their range (from the catalogue, which sqlc's schema does not hold).
const partitionsSQL = `
SELECT c.relname::text,
       (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \(''([^'']+)''\)'))[1]::timestamptz,
       (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''([^'']+)''\)'))[1]::timestamptz
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'scans'::regclass AND pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT'
ORDER BY 3`

// defaultPartitionBeforeSQL deletes at most $2 folded scans before $1 from
// the default partition (through its primary key, which leads with
// occurred_at); sqlc's schema does not know the partition as a table.
const defaultPartitionBeforeSQL = `
DELETE FROM scans_default WHERE (occurred_at, id) IN (
    SELECT occurred_at, id FROM scans_default
    WHERE occurred_at < $1 AND (xid IS NULL OR xid < (SELECT folded_below FROM scan_fold_state))
    LIMIT $2)`
