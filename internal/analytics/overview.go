package analytics

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/scan/rollup"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/tz"
)

// OverviewTopLinks is how many links the overview ranks.
const OverviewTopLinks = 10

// MaxOverviewDays bounds the overview's range.
const MaxOverviewDays = 400

// Overview is a workspace's scans over whole days of a time zone, every
// link together: the workspace overview page. Its parts agree: the days'
// scans, the countries' and the sources' each add up to Total.
type Overview struct {
	// From and To are the first day's start and the start of the day after
	// the last: midnights in Zone, as UTC instants.
	From, To time.Time
	// Zone is the time zone the days are cut in.
	Zone tz.Zone
	// AsOf is when the last fold began: the overview counts every scan
	// recorded before then.
	AsOf  time.Time
	Total int64
	// Days has one bucket per day of the range, zeros included; a day with
	// a daylight-saving change has 23 or 25 hours.
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

// Overview reads the workspace overview of the days of zone [from, to)
// (from and to are truncated to their local midnight): the series from the
// hours the fold keeps per workspace (scan_workspace_hours), cut at local
// midnights (and inside an hour, at its quarter marks, for zones off the
// whole hour); countries, sources and top links from the whole UTC days the
// fold keeps per workspace, day and key (scan_workspace_days), plus the
// partial UTC days at the range's ends from hours. So it costs a few rows
// per day and hour whatever the number of links, plus one per link and day
// for the top links. It runs under the same limits as reports (the pace,
// the per-workspace and global slots, the statement timeout) and answers a
// *BusyError when they refuse.
func (s *Reports) Overview(ctx context.Context, ws uuid.UUID, from, to time.Time, zone tz.Zone) (Overview, error) {
	loc := zone.Location()
	from, to = Day.TruncateIn(from, loc).UTC(), Day.TruncateIn(to, loc).UTC()
	if !from.Before(to) {
		return Overview{}, errors.New("analytics: the overview's range is empty")
	}
	days := 0
	for d := from; d.Before(to); d = Day.NextIn(d, loc) {
		if days++; days > MaxOverviewDays {
			return Overview{}, fmt.Errorf("analytics: the overview may span at most %d days", MaxOverviewDays)
		}
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
		o, err = overview(ctx, db, ws, from, to, zone)
		return err
	})
	if errors.Is(err, store.ErrStatementTimeout) {
		return Overview{}, &BusyError{RetryAfter: 5 * time.Second, Reason: "the analytics query took too long; retry later"}
	}
	return o, err
}

// overview reads the overview in one read-only snapshot.
func overview(ctx context.Context, db store.DBTX, ws uuid.UUID, from, to time.Time, zone tz.Zone) (Overview, error) {
	loc := zone.Location()
	o := Overview{From: from, To: to, Zone: zone, Days: []Bucket{}, TopLinks: []OverviewLink{}, Countries: []KeyCount{}, Sources: []KeyCount{}}
	state, err := rollup.State(ctx, db)
	if err != nil {
		return o, err
	}
	o.AsOf = state.FoldedAt.UTC()

	// The days, cut at local midnights: starts[i] is day i's first
	// instant, starts[i+1] (or to) the next day's.
	var starts []time.Time
	for day := from; day.Before(to); day = Day.NextIn(day, loc).UTC() {
		starts = append(starts, day)
		o.Days = append(o.Days, Bucket{Start: day})
	}
	end := func(i int) time.Time {
		if i+1 < len(starts) {
			return starts[i+1]
		}
		return to
	}
	hours, err := rollup.OverviewHours(ctx, db, ws, Hour.Truncate(from), ceilTo(Hour, to))
	if err != nil {
		return o, err
	}
	for _, h := range hours {
		hour := h.Hour.UTC()
		before := func(t time.Time) int64 { // the hour's scans before t
			switch k := t.Sub(hour) / quarterHour; {
			case k <= 0:
				return 0
			case k >= 4:
				return h.Scans
			default:
				return h.ScansBefore[k-1]
			}
		}
		// The days the hour overlaps (two when a local midnight cuts it),
		// each taking its scans between the day's bounds.
		for i := max(0, sort.Search(len(starts), func(i int) bool { return starts[i].After(hour) })-1); i < len(starts) && starts[i].Before(hour.Add(time.Hour)); i++ {
			n := before(end(i)) - before(starts[i])
			o.Days[i].Scans += n
			o.Total += n
		}
	}

	span := overviewSpan(from, to)
	keys, err := rollup.OverviewKeys(ctx, db, ws, span)
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

	top, err := rollup.OverviewTop(ctx, db, ws, span, OverviewTopLinks)
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

const quarterHour = 15 * time.Minute

// overviewSpan is how the overview counts [from, to), instants on quarter
// hours: the UTC days it covers whole, and the partial UTC days at its ends
// as pieces of hours. A partial day is read as its part inside the range,
// added, or as the whole day with its part outside the range taken away,
// whichever has fewer hours: at most 12 at each end.
func overviewSpan(from, to time.Time) rollup.OverviewSpan {
	var s rollup.OverviewSpan
	d0, d1 := Day.Truncate(from), ceilTo(Day, to)
	for d := d0; d.Before(d1); d = Day.Next(d) {
		s.Days = append(s.Days, d)
	}
	head, tail := from.Sub(d0), d1.Sub(to) // outside the range, before and after
	dropDay := func(day time.Time) {
		s.Days = slices.DeleteFunc(s.Days, func(d time.Time) bool { return d.Equal(day) })
	}
	edge := func(day time.Time, parts ...[2]time.Time) {
		num := int32(len(s.Edges) + 1)
		e := rollup.Edge{Num: num, Day: day, From: day.Add(24 * time.Hour), To: day}
		for _, part := range parts {
			a, b, sign := part[0], part[1], int32(1)
			if b.Before(a) { // a part taken away is given backwards
				a, b, sign = b, a, -1
			}
			for h := a.Truncate(time.Hour); h.Before(b); h = h.Add(time.Hour) {
				lo, hi := max(0, a.Sub(h)/quarterHour), min(4, b.Sub(h)/quarterHour)
				if lo >= hi {
					continue
				}
				s.Pieces = append(s.Pieces, rollup.Piece{Hour: h, Lo: int32(lo), Hi: int32(hi), Sign: sign, Edge: num})
				e.From, e.To = minTime(e.From, h), maxTime(e.To, h.Add(time.Hour))
			}
		}
		if e.From.Before(e.To) {
			s.Edges = append(s.Edges, e)
		}
	}
	switch {
	case head == 0 && tail == 0:
	case d1.Sub(d0) == 24*time.Hour: // inside one UTC day
		if to.Sub(from) <= head+tail {
			dropDay(d0)
			edge(d0, [2]time.Time{from, to})
		} else {
			edge(d0, [2]time.Time{from, d0}, [2]time.Time{d1, to})
		}
	default:
		if head > 0 {
			if next := Day.Next(d0); next.Sub(from) <= head {
				dropDay(d0)
				edge(d0, [2]time.Time{from, next})
			} else {
				edge(d0, [2]time.Time{from, d0})
			}
		}
		if tail > 0 {
			if last := d1.Add(-24 * time.Hour); to.Sub(last) <= tail {
				dropDay(last)
				edge(last, [2]time.Time{last, to})
			} else {
				edge(last, [2]time.Time{d1, to})
			}
		}
	}
	return s
}
