package link

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/store/dbsqlc"
)

// withQueued adds to each link the human scans still in the fold queue:
// links.scan_count and last_scanned_at hold the folded scans only, and
// every committed scan is either folded or queued, so the sum is exact at
// the read's snapshot (docs/scan-pipeline.md). One indexed query for the
// whole slice.
func withQueued(ctx context.Context, db dbsqlc.DBTX, links []Link) error {
	if len(links) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(links))
	at := make(map[uuid.UUID]int, len(links))
	for i, l := range links {
		ids[i] = l.ID
		at[l.ID] = i
	}
	rows, err := dbsqlc.New().ScanQueueCounts(ctx, db, ids)
	if err != nil {
		return store.InterpretError(err)
	}
	for _, r := range rows {
		last := r.LastAt
		addQueued(&links[at[r.LinkID]], r.Scans, &last)
	}
	return nil
}

// addQueued adds a link's queued human scans, the last of them at last
// (nil: none), to its folded counts.
func addQueued(l *Link, scans int64, last *time.Time) {
	l.ScanCount += scans
	if last != nil && (l.LastScannedAt == nil || last.After(*l.LastScannedAt)) {
		l.LastScannedAt = last
	}
}

// withQueuedOne is withQueued for one link.
func withQueuedOne(ctx context.Context, db dbsqlc.DBTX, l Link) (Link, error) {
	one := []Link{l}
	err := withQueued(ctx, db, one)
	return one[0], err
}
