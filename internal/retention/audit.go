package retention

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/audit"
)

// audit deletes audit log entries older than Policy.Audit, of every
// workspace. Entries go oldest first within a workspace (a chain loses its
// start, never a middle), so verifying a chain starts from its oldest
// entry left (docs/api.md#audit-log); each batch is its own transaction,
// the only kind the append-only trigger lets delete (audit.PurgeOlder).
func (r *run) audit(ctx context.Context) error {
	before := r.now.Add(-r.p.Policy.Audit)
	return r.batches(ctx, "audit_events", r.budget(), func(ctx context.Context, lim int32) (int64, error) {
		var n int64
		err := r.p.DB.InTx(ctx, func(tx pgx.Tx) error {
			var err error
			n, err = audit.PurgeOlder(ctx, tx, before, lim)
			return err
		})
		return n, err
	})
}
