package retention

import (
	"context"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/store/dbsqlc"
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
// the retention grows. An unknown workspace is store.ErrNotFound.
func SetScanMonths(ctx context.Context, db *store.DB, workspace uuid.UUID, m ScanMonths) error {
	var months *int32
	if !m.Default() {
		n := int32(m.n)
		months = &n
	}
	n, err := dbsqlc.New().RetentionWorkspaceSetScanMonths(ctx, db.Conn(ctx), dbsqlc.RetentionWorkspaceSetScanMonthsParams{Months: months, ID: workspace})
	if err != nil {
		return store.InterpretError(err)
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}
