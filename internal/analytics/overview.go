package analytics

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/scan/rollup"
	"github.com/linkqr/linkqr/internal/store"
)

// OverviewTopLinks is how many links the overview ranks.
const OverviewTopLinks = 10

// MaxOverviewDays bounds the overview's range.
const MaxOverviewDays = 400

// Overview is a workspace's scans over whole UTC days, every link together:
// the workspace overview page. Its parts agree: the days' scans, the
// countries' and the sources' each add up to Total.
type Overview struct {
	// From and To are the first day and the day after the last, UTC
	// midnights.
	From, To time.Time
	// AsOf is when the last fold began: the overview counts every scan
	// recorded before then.
	AsOf  time.Time
	Total int64
	// Days has one bucket per day of the range, zeros included.
	Days []Bucket
	// TopLinks are the links with the most scans, most first, at most
	// OverviewTopLinks.
	TopLinks []OverviewLink
	// Countries lists every country (ISO 3166-1 alpha-2, "(unknown)" when
	// it could not be told), Sources both sources ("qr", "link"); most
	// scans first.
	Countries []KeyCount
	Sources   []KeyCount
}

// OverviewLink is one of the overview's top links. A link that was deleted
// (or whose row is gone) has Deleted set; its code and title are those it
// had, or empty when the row is gone.
type OverviewLink struct {
	ID      uuid.UUID
	Code    string
	Title   string
	Domain  string // the custom domain's hostname; "": the default short domain
	Deleted bool
	Scans   int64
}

// Overview reads the workspace overview of the UTC days [from, to) (from
// and to are truncated to their day) from scan_workspace_days, which the
// fold keeps per workspace, day and key: a few rows per day whatever the
// number of links, plus one per link and day for the top links. It runs
// under the same limits as reports (the pace, the per-workspace and global
// slots, the statement timeout) and answers a *BusyError when they refuse.
func (s *Reports) Overview(ctx context.Context, ws uuid.UUID, from, to time.Time) (Overview, error) {
	from, to = Day.Truncate(from), Day.Truncate(to)
	if !from.Before(to) {
		return Overview{}, errors.New("analytics: the overview's range is empty")
	}
	if to.Sub(from) > MaxOverviewDays*24*time.Hour {
		return Overview{}, fmt.Errorf("analytics: the overview may span at most %d days", MaxOverviewDays)
	}
	if ok, err := s.limits.Pace.Acquire(ctx, paceEstimate, s.limits.Wait); err != nil {
		return Overview{}, err
	} else if !ok {
		return Overview{}, &BusyError{RetryAfter: time.Second, Reason: "short links are being followed at a high rate and analytics yields to them; retry shortly"}
	}
	release, err := s.limiter.acquire(ctx, ws)
	if err != nil {
		return Overview{}, err
	}
	defer release()
	start := time.Now()
	defer func() { s.limits.Pace.Adjust(float64(time.Since(start).Milliseconds()) - paceEstimate) }()

	var o Overview
	err = s.db.ReadOnly(ctx, s.limits.StatementTimeout, func(db store.DBTX) error {
		var err error
		o, err = overview(ctx, db, ws, from, to)
		return err
	})
	if errors.Is(err, store.ErrStatementTimeout) {
		return Overview{}, &BusyError{RetryAfter: 5 * time.Second, Reason: "the analytics query took too long; retry later"}
	}
	return o, err
}

// overview reads the overview in one read-only snapshot.
func overview(ctx context.Context, db store.DBTX, ws uuid.UUID, from, to time.Time) (Overview, error) {
	o := Overview{From: from, To: to, Days: []Bucket{}, TopLinks: []OverviewLink{}, Countries: []KeyCount{}, Sources: []KeyCount{}}
	state, err := rollup.State(ctx, db)
	if err != nil {
		return o, err
	}
	o.AsOf = state.FoldedAt.UTC()

	var list []time.Time
	for day := from; day.Before(to); day = Day.Next(day) {
		list = append(list, day)
	}
	days, err := rollup.OverviewDays(ctx, db, ws, list)
	if err != nil {
		return o, err
	}
	byDay := make(map[time.Time]int64, len(days))
	for _, d := range days {
		byDay[Day.Truncate(d.Day)] = d.Scans
	}
	for _, day := range list {
		n := byDay[day]
		o.Days = append(o.Days, Bucket{Start: day, Scans: n})
		o.Total += n
	}

	keys, err := rollup.OverviewKeys(ctx, db, ws, list)
	if err != nil {
		return o, err
	}
	for _, k := range keys {
		switch k.Dim {
		case "c":
			o.Countries = append(o.Countries, KeyCount{Key: k.Key, Scans: k.Scans})
		case "s":
			o.Sources = append(o.Sources, KeyCount{Key: k.Key, Scans: k.Scans})
		}
	}

	top, err := rollup.OverviewTop(ctx, db, ws, list, OverviewTopLinks)
	if err != nil {
		return o, err
	}
	ids := make([]uuid.UUID, 0, len(top))
	for _, t := range top {
		id, err := uuid.Parse(t.Key)
		if err != nil {
			return o, fmt.Errorf("analytics: overview link key %q: %w", t.Key, err)
		}
		ids = append(ids, id)
		o.TopLinks = append(o.TopLinks, OverviewLink{ID: id, Scans: t.Scans, Deleted: true})
	}
	if len(ids) == 0 {
		return o, nil
	}
	names, err := rollup.LinkNames(ctx, db, ws, ids)
	if err != nil {
		return o, err
	}
	byID := make(map[uuid.UUID]rollup.LinkName, len(names))
	for _, n := range names {
		byID[n.ID] = n
	}
	for i := range o.TopLinks {
		l := &o.TopLinks[i]
		n, ok := byID[l.ID]
		if !ok {
			continue // the row is gone: a deleted link
		}
		l.Code, l.Deleted = n.Code, n.DeletedAt != nil
		if n.Title != nil {
			l.Title = *n.Title
		}
		if n.Domain != nil {
			l.Domain = *n.Domain
		}
	}
	return o, nil
}
