// Package scan records and lists scans: every redirect through a short URL.
// Recording is buffered and batched so the redirect never waits for the
// database, yet nothing is dropped: a full buffer makes redirects wait
// (backpressure), a failing database is retried, and shutdown drains the
// buffer before the pool closes.
//
// scan is the one owner of the scans and their rollups: it writes them
// (the fold), and reports read them through internal/scan/rollup.
package scan

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/cursor"
	"github.com/linkqr/linkqr/internal/geo"
	"github.com/linkqr/linkqr/internal/scan/internal/scandb"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/wire"
)

// Scan is one recorded scan.
type Scan struct {
	ID           uuid.UUID
	LinkID       uuid.UUID
	OccurredAt   time.Time
	ReferrerHost *string // nil: none was sent
	Device       string
	OS           string
	Browser      string
	Bot          bool
	Country      geo.Country // geo.Unknown: could not be told
	Source       Source
	// Variant is the destination that served the scan: "" (the link's
	// target_url), "rule:<n>" or "split:<n>".
	Variant string
}

// Source is how a scan reached the short URL: through a QR code, whose
// content carries link.QRQuery, or as a plain link.
type Source string

// The sources of a scan.
const (
	SourceQR   Source = "qr"
	SourceLink Source = "link"
)

// SourceOf is the source of a hit.
func SourceOf(qr bool) Source {
	if qr {
		return SourceQR
	}
	return SourceLink
}

// Position is where the scan is in a link's list, which is ordered by
// occurred_at then id.
func (s Scan) Position() cursor.Position { return cursor.Position{At: s.OccurredAt, ID: s.ID} }

// Wire is the API's scan object (the Scan schema of
// internal/api/openapi.yaml), as the API lists it and scan.created events
// carry it (see package wire).
func (s Scan) Wire() wire.Scan {
	return wire.Scan{
		Object: "scan", ID: wire.ScanID(s.ID), LinkID: wire.LinkID(s.LinkID), OccurredAt: wire.Time(s.OccurredAt),
		ReferrerHost: s.ReferrerHost, Device: s.Device, OS: s.OS, Browser: s.Browser, Bot: s.Bot,
		Country: s.Country.Ptr(), Source: string(s.Source), Variant: variantPtr(s.Variant),
	}
}

func variantPtr(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// Reader reads recorded scans.
type Reader struct{ db *store.DB }

// NewReader returns a Reader over db.
func NewReader(db *store.DB) *Reader { return &Reader{db: db} }

// List returns up to limit scans of a link before the position before
// (nil: the newest), newest first by occurred_at then id, and whether more
// follow. The link must belong to the workspace; callers check that first
// so an unknown link is a 404.
func (s *Reader) List(ctx context.Context, ws, linkID uuid.UUID, before *cursor.Position, limit int) ([]Scan, bool, error) {
	p := scandb.ScanListByLinkParams{LinkID: linkID, WorkspaceID: ws, Lim: int32(limit + 1)}
	if before != nil {
		p.BeforeID, p.BeforeTime = &before.ID, before.At
	}
	rows, err := scandb.New().ScanListByLink(ctx, s.db.Conn(ctx), p)
	if err != nil {
		return nil, false, store.InterpretError(err)
	}
	out, hasMore := store.Page(rows, limit, func(r scandb.ScanListByLinkRow) Scan {
		return stored(r.ID, r.LinkID, r.OccurredAt, r.ReferrerHost, r.Device, r.OS, r.Browser, r.Bot, r.Country, r.Source, r.Variant)
	})
	return out, hasMore, nil
}

// EnsurePartitions creates the monthly partitions of the scans table from
// last month to two months ahead; run at start and daily.
func EnsurePartitions(ctx context.Context, db *store.DB, now time.Time) error {
	err := scandb.New().ScanEnsurePartitions(ctx, db.Conn(ctx), scandb.ScanEnsurePartitionsParams{Start: now.AddDate(0, -1, 0), Months: 4})
	return store.InterpretError(err)
}

// InRange returns up to limit scans of a link that occurred in [from, to),
// oldest first, after the scan after (nil: from the first), and whether
// more follow: the pages of a streamed export. The link must belong to the
// workspace; callers check that first.
func (s *Reader) InRange(ctx context.Context, ws, linkID uuid.UUID, from, to time.Time, after *Scan, limit int) ([]Scan, bool, error) {
	p := scandb.ScanListByLinkRangeParams{LinkID: linkID, WorkspaceID: ws, FromTime: from, ToTime: to, Lim: int32(limit + 1)}
	if after != nil {
		p.AfterID, p.AfterTime = &after.ID, after.OccurredAt
	}
	rows, err := scandb.New().ScanListByLinkRange(ctx, s.db.Conn(ctx), p)
	if err != nil {
		return nil, false, store.InterpretError(err)
	}
	out, hasMore := store.Page(rows, limit, func(r scandb.ScanListByLinkRangeRow) Scan {
		return stored(r.ID, r.LinkID, r.OccurredAt, r.ReferrerHost, r.Device, r.OS, r.Browser, r.Bot, r.Country, r.Source, r.Variant)
	})
	return out, hasMore, nil
}

// stored is a scan as a row of the scans table holds it.
func stored(id, linkID uuid.UUID, at time.Time, referrer *string, device, os, browser string, bot bool, country *string, source string, variant *string) Scan {
	s := Scan{ID: id, LinkID: linkID, OccurredAt: at, ReferrerHost: referrer, Device: device, OS: os, Browser: browser, Bot: bot, Source: Source(source)}
	if variant != nil {
		s.Variant = *variant
	}
	if country != nil {
		s.Country, _ = geo.ParseCountry(*country)
	}
	return s
}
