package retention

import (
	"context"
	"fmt"
	"strconv"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/retention/internal/retentiondb"
	"github.com/linkqr/linkqr/internal/store"
)

// MaxScanMonths bounds a workspace's scan retention (a century).
const MaxScanMonths = 1200

// ScanMonths is a workspace's raw-scan retention in whole months; the zero
// value is "the deployment's default" (LINKQR_SCAN_RETENTION_MONTHS).
type ScanMonths struct{ n int }

// ParseScanMonths reads "default" or a whole number of months from 1 to
// MaxScanMonths.
func ParseScanMonths(s string) (ScanMonths, error) {
	if s == "default" {
		return ScanMonths{}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxScanMonths {
		return ScanMonths{}, fmt.Errorf("%q is not \"default\" or a whole number of months from 1 to %d", s, MaxScanMonths)
	}
	return ScanMonths{n}, nil
}

// Default reports whether the workspace follows the deployment's default.
func (m ScanMonths) Default() bool { return m.n == 0 }

// Months is the number of months (0 for the default).
func (m ScanMonths) Months() int { return m.n }

// SetScanMonths sets how long a workspace keeps its raw scans; the next
// run of the scans job applies it. Scans already purged stay purged when
// the retention grows. An unknown workspace is id.ErrNotFound.
func SetScanMonths(ctx context.Context, db *store.DB, workspace uuid.UUID, m ScanMonths) error {
	var months *int32
	if !m.Default() {
		n := int32(m.n)
		months = &n
	}
	return db.InTx(ctx, func(tx pgx.Tx) error {
		q := retentiondb.New()
		old, err := q.RetentionWorkspaceScanMonths(ctx, tx, workspace)
		if err != nil {
			return store.InterpretError(err)
		}
		n, err := q.RetentionWorkspaceSetScanMonths(ctx, tx, retentiondb.RetentionWorkspaceSetScanMonthsParams{Months: months, ID: workspace})
		if err != nil {
			return store.InterpretError(err)
		}
		if n == 0 {
			return id.ErrNotFound
		}
		if equalMonths(old, months) {
			return nil
		}
		return audit.Record(ctx, tx, workspace, audit.WorkspaceRetentionChanged, audit.TargetOf("workspace", id.Workspace, workspace), audit.Changes{
			"scan_retention_months": audit.Change(monthsValue(old), monthsValue(months)),
		})
	})
}

func equalMonths(a, b *int32) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// monthsValue is a retention as an audit entry shows it: months, or
// "default".
func monthsValue(m *int32) any {
	if m == nil {
		return "default"
	}
	return *m
}
