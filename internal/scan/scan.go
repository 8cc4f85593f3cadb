// Package scan records and lists scans: every redirect through a short URL.
// Recording is buffered and batched so the redirect never waits for the
// database, yet nothing is dropped: a full buffer makes redirects wait
// (backpressure), a failing database is retried, and shutdown drains the
// buffer before the pool closes.
package scan

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/store/dbsqlc"
)

// Resource is the scan object of CONTRACT.md section 6.4.
type Resource struct {
	Object       string    `json:"object"`
	ID           string    `json:"id"`
	LinkID       string    `json:"link_id"`
	OccurredAt   time.Time `json:"occurred_at"`
	ReferrerHost *string   `json:"referrer_host"`
	Device       string    `json:"device"`
	OS           string    `json:"os"`
	Browser      string    `json:"browser"`
	Bot          bool      `json:"bot"`
}

func resource(id, linkID uuid.UUID, at time.Time, referrer *string, device, os, browser string, bot bool) Resource {
	return Resource{
		Object: "scan", ID: store.FormatID(store.PrefixScan, id), LinkID: store.FormatID(store.PrefixLink, linkID),
		OccurredAt: at.UTC(), ReferrerHost: referrer, Device: device, OS: os, Browser: browser, Bot: bot,
	}
}

// Reader reads recorded scans.
type Reader struct{ db *store.DB }

// NewReader returns a Reader over db.
func NewReader(db *store.DB) *Reader { return &Reader{db: db} }

// List returns up to limit scans of a link older than before (nil: the
// newest), newest first, and whether more follow. The link must belong to
// the workspace; callers check that first so an unknown link is a 404.
func (s *Reader) List(ctx context.Context, ws, linkID uuid.UUID, before *uuid.UUID, limit int) ([]Resource, bool, error) {
	rows, err := dbsqlc.New().ScanListByLink(ctx, s.db.Conn(ctx), dbsqlc.ScanListByLinkParams{
		LinkID: linkID, WorkspaceID: ws, Before: before, Limit: int32(limit + 1),
	})
	if err != nil {
		return nil, false, store.InterpretError(err)
	}
	out, hasMore := store.Page(rows, limit, func(r dbsqlc.ScanListByLinkRow) Resource {
		return resource(r.ID, r.LinkID, r.OccurredAt, r.ReferrerHost, r.Device, r.OS, r.Browser, r.Bot)
	})
	return out, hasMore, nil
}

// EnsurePartitions creates the monthly partitions of the scans table from
// last month to two months ahead; run at start and daily.
func EnsurePartitions(ctx context.Context, db *store.DB, now time.Time) error {
	err := dbsqlc.New().ScanEnsurePartitions(ctx, db.Conn(ctx), dbsqlc.ScanEnsurePartitionsParams{Start: now.AddDate(0, -1, 0), Months: 4})
	return store.InterpretError(err)
}
