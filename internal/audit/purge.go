package audit

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/audit/internal/auditdb"
	"github.com/linkqr/linkqr/internal/store"
)

// AllowPurge lets tx delete audit entries: the append-only trigger lets a
// DELETE through only in a transaction that called it. Only the retention
// purge and the purge of a deleted workspace call it (the workspace's own
// row going cascades to its entries).
func AllowPurge(ctx context.Context, tx pgx.Tx) error {
	return store.InterpretError(auditdb.New().AuditPurgeAllow(ctx, tx))
}

// PurgeOlder deletes, in tx, up to limit entries of any workspace created
// before cutoff (retention), and returns how many.
func PurgeOlder(ctx context.Context, tx pgx.Tx, cutoff time.Time, limit int32) (int64, error) {
	if err := AllowPurge(ctx, tx); err != nil {
		return 0, err
	}
	n, err := auditdb.New().AuditEventDeleteOlder(ctx, tx, auditdb.AuditEventDeleteOlderParams{Cutoff: cutoff, Lim: limit})
	return n, store.InterpretError(err)
}

// PurgeWorkspace deletes, in tx, up to limit entries of a deleted
// workspace, and returns how many.
func PurgeWorkspace(ctx context.Context, tx pgx.Tx, workspaceID uuid.UUID, limit int32) (int64, error) {
	if err := AllowPurge(ctx, tx); err != nil {
		return 0, err
	}
	n, err := auditdb.New().AuditEventDeleteWorkspace(ctx, tx, auditdb.AuditEventDeleteWorkspaceParams{WorkspaceID: workspaceID, Lim: limit})
	return n, store.InterpretError(err)
}
