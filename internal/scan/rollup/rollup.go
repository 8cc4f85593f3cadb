// Package rollup is how reports read what internal/scan writes: the fold's
// state, the per-link rollups, the raw scans of a range's partial edge
// hours and the workspace overview's days (queries/scan/analytics.sql).
// scan owns those tables alone; this package is the read half of that one
// owner, apart from package scan only because scan imports
// internal/analytics (user-agent classification, the visitor hash) and
// analytics' reports read here. It shares scan's generated queries (Go's
// internal/ rule lets internal/scan/... import internal/scan/internal/scandb)
// and returns its own types.
//
// Every function runs on the db it is given, so a report's reads share one
// snapshot (store.DB.ReadOnly); errors come translated (store.InterpretError).
package rollup

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/scan/internal/scandb"
	"github.com/linkqr/linkqr/internal/store"
)

// FoldState is how far the fold has gone: every scan of a transaction
// below FoldedBelow is in the rollups, as of FoldedAt; Version moves with
// every change of the rollups.
type FoldState struct {
	FoldedBelow int64
	FoldedAt    time.Time
	Version     int64
}

// State reads the fold's state.
func State(ctx context.Context, db store.DBTX) (FoldState, error) {
	s, err := scandb.New().ScanFoldState(ctx, db)
	return FoldState(s), store.InterpretError(err)
}

// Version is the rollups' version alone: a report computed at a version
// is the answer for as long as it stays.
func Version(ctx context.Context, db store.DBTX) (int64, error) {
	v, err := scandb.New().ScanFoldVersion(ctx, db)
	return v, store.InterpretError(err)
}

// Hour is one hour of a link's rollup: scans and bots, the visitors
// unique in the hour, and those first and last seen that UTC day in it;
// the arrays are at the marks 15, 30 and 45 minutes into the hour
// (migration 00044): ScansBefore the human scans before the mark, UniqFrom
// the distinct visitors of the hour-long window starting at it, FirstBefore
// the visitors first seen that day in this hour before it, LastFrom those
// last seen in this hour at or after it.
type Hour struct {
	Hour        time.Time
	Scans       int64
	Bots        int64
	Uniq        int64
	DayFirst    int64
	DayLast     int64
	ScansBefore [3]int64
	UniqFrom    [3]int64
	FirstBefore [3]int64
	LastFrom    [3]int64
}

// ScansInQuarters returns the human scans of the hour's quarters [lo, hi)
// (0 <= lo <= hi <= 4).
func (h *Hour) ScansInQuarters(lo, hi int32) int64 {
	return atMark(int(hi), 0, h.Scans, h.ScansBefore) - atMark(int(lo), 0, h.Scans, h.ScansBefore)
}

// LastIn returns the visitors whose last human scan of their UTC day falls
// in the hour's quarter q (0-3).
func (h *Hour) LastIn(q int) int64 {
	return atMark(q, h.DayLast, 0, h.LastFrom) - atMark(q+1, h.DayLast, 0, h.LastFrom)
}

// FirstIn returns the visitors whose first human scan of their UTC day
// falls in the hour's quarter q (0-3).
func (h *Hour) FirstIn(q int) int64 {
	return atMark(q+1, 0, h.DayFirst, h.FirstBefore) - atMark(q, 0, h.DayFirst, h.FirstBefore)
}

// atMark reads a counter kept at the hour's quarter marks: at mark q
// (0-4), start at 0, end at 4, marks[q-1] between.
func atMark(q int, start, end int64, marks [3]int64) int64 {
	switch q {
	case 0:
		return start
	case 4:
		return end
	}
	return marks[q-1]
}

// Hours reads the hours [from, to) of the workspace's link, in order.
func Hours(ctx context.Context, db store.DBTX, ws, linkID uuid.UUID, from, to time.Time) ([]Hour, error) {
	rows, err := scandb.New().AnalyticsHours(ctx, db, scandb.AnalyticsHoursParams{LinkID: linkID, WorkspaceID: ws, FromHour: from, ToHour: to})
	return convert(rows, func(r scandb.AnalyticsHoursRow) Hour {
		return Hour{
			Hour: r.Hour, Scans: r.Scans, Bots: r.Bots, Uniq: r.Uniq, DayFirst: r.DayFirst, DayLast: r.DayLast,
			ScansBefore: [3]int64{r.Scans15, r.Scans30, r.Scans45}, UniqFrom: [3]int64{r.Uniq15, r.Uniq30, r.Uniq45},
			FirstBefore: [3]int64{r.First15, r.First30, r.First45}, LastFrom: [3]int64{r.Last15, r.Last30, r.Last45},
		}
	}), store.InterpretError(err)
}

// EdgeQuery asks for one link's folded scans (below FoldedBelow) of the
// windows [From1, To1) and [From2, To2), each inside one hour.
type EdgeQuery struct {
	LinkID      uuid.UUID
	WorkspaceID uuid.UUID
	From1       time.Time
	To1         time.Time
	FoldedBelow int64
	From2       time.Time
	To2         time.Time
}

// EdgeScansQuery asks for one link's folded human scans (below
// FoldedBelow) of the windows [From1, To1) and [From2, To2), each inside
// one quarter-hour, split at Split1 (Split2): the scans at or after it
// are After. The visitors' quarter-hours are looked up on the side
// ProbeAfter1 (ProbeAfter2) names.
type EdgeScansQuery struct {
	Split1      time.Time
	LinkID      uuid.UUID
	WorkspaceID uuid.UUID
	From1       time.Time
	To1         time.Time
	FoldedBelow int64
	Split2      time.Time
	From2       time.Time
	To2         time.Time
	ProbeAfter1 bool
	ProbeAfter2 bool
}

// EdgeScans are the human scans of one window (W: 1 or 2), side of its
// split and visitor at a range's edge, with the visitor's quarter-hours of
// that UTC day (DayAm: quarters 0-47, DayPm: 48-95) on the side looked up,
// 0 on the other.
type EdgeScans struct {
	W           int32
	After       bool
	Quarter     time.Time
	VisitorHash []byte
	Scans       int64
	DayAm       int64
	DayPm       int64
}

// Edges reads the human scans of the windows of q.
func Edges(ctx context.Context, db store.DBTX, q EdgeScansQuery) ([]EdgeScans, error) {
	rows, err := scandb.New().AnalyticsEdgeScans(ctx, db, scandb.AnalyticsEdgeScansParams(q))
	return convert(rows, func(r scandb.AnalyticsEdgeScansRow) EdgeScans { return EdgeScans(r) }), store.InterpretError(err)
}

// EdgeBots counts the bot scans of each window of q.
func EdgeBots(ctx context.Context, db store.DBTX, q EdgeQuery) (int64, int64, error) {
	n, err := scandb.New().AnalyticsEdgeBots(ctx, db, scandb.AnalyticsEdgeBotsParams(q))
	return n.Bots1, n.Bots2, store.InterpretError(err)
}

// VisitorsInQuarters counts the distinct visitors of the workspace's
// link and UTC day seen in any quarter-hour of the masks (am: bit q is
// quarter q of the day, q < 48; pm: bit q-48).
func VisitorsInQuarters(ctx context.Context, db store.DBTX, ws, linkID uuid.UUID, day time.Time, am, pm int64) (int64, error) {
	n, err := scandb.New().AnalyticsVisitorsInQuarters(ctx, db, scandb.AnalyticsVisitorsInQuartersParams{LinkID: linkID, WorkspaceID: ws, Day: day, Am: am, Pm: pm})
	return n, store.InterpretError(err)
}

// KeysQuery asks for one link's top breakdown keys: whole days
// [FromDay, ToDay) from the daily rollup, the hours [HourFrom1, HourTo1)
// and [HourFrom2, HourTo2) from the hourly one, the quarters [PieceLo1,
// PieceHi1) of the hour PieceHour1 (0 <= lo <= hi <= 4; lo == hi: none) and
// those of PieceHour2 (and PieceHour3, PieceHour4) from the hourly one's
// counts before the quarter marks, the partial quarter-hours [From1, To1)
// and [From2, To2) from the scans folded below FoldedBelow, added (Sign 1)
// or taken away (-1); at most MaxKeys per breakdown, countries and variants
// whole.
type KeysQuery struct {
	MaxKeys     int64
	LinkID      uuid.UUID
	WorkspaceID uuid.UUID
	FromDay     time.Time
	ToDay       time.Time
	HourFrom1   time.Time
	HourTo1     time.Time
	HourFrom2   time.Time
	HourTo2     time.Time
	PieceHour1  time.Time
	PieceLo1    int32
	PieceHi1    int32
	PieceHour2  time.Time
	PieceLo2    int32
	PieceHi2    int32
	PieceHour3  time.Time
	PieceLo3    int32
	PieceHi3    int32
	PieceHour4  time.Time
	PieceLo4    int32
	PieceHi4    int32
	Sign1       int32
	From1       time.Time
	To1         time.Time
	FoldedBelow int64
	Sign2       int32
	From2       time.Time
	To2         time.Time
}

// Key is a breakdown's key and its human scans; Dim is the breakdown: d
// device, o OS, b browser, r referrer, c country, s source, v variant
// (and, in the overview's days, l link).
type Key struct {
	Dim   string
	Key   string
	Scans int64
}

// Keys reads the keys of q, per Dim, scans descending, then key.
func Keys(ctx context.Context, db store.DBTX, q KeysQuery) ([]Key, error) {
	rows, err := scandb.New().AnalyticsKeys(ctx, db, scandb.AnalyticsKeysParams(q))
	return convert(rows, func(r scandb.AnalyticsKeysRow) Key { return Key(r) }), store.InterpretError(err)
}

// OverviewHour is a workspace's human scans of one UTC hour, and those
// before the marks 15, 30 and 45 minutes into it.
type OverviewHour struct {
	Hour        time.Time
	Scans       int64
	ScansBefore [3]int64
}

// OverviewHours reads the workspace's human scans per hour of [from, to)
// (hours without scans are left out), in order.
func OverviewHours(ctx context.Context, db store.DBTX, ws uuid.UUID, from, to time.Time) ([]OverviewHour, error) {
	rows, err := scandb.New().AnalyticsOverviewHours(ctx, db, scandb.AnalyticsOverviewHoursParams{WorkspaceID: ws, FromHour: from, ToHour: to})
	return convert(rows, func(r scandb.AnalyticsOverviewHoursRow) OverviewHour {
		return OverviewHour{Hour: r.Hour, Scans: r.Scans, ScansBefore: [3]int64{r.Scans15, r.Scans30, r.Scans45}}
	}), store.InterpretError(err)
}

// Piece is part of one UTC hour, added (Sign 1) or taken away (-1): its
// quarter-hours [Lo, Hi), 0 <= Lo < Hi <= 4. Edge numbers the range's end
// it belongs to (1 or 2).
type Piece struct {
	Hour   time.Time
	Lo, Hi int32
	Sign   int32
	Edge   int32
}

// Edge is one partial UTC day at an end of the overview's range: Day, and
// the hours [From, To) its pieces lie in.
type Edge struct {
	Num      int32
	Day      time.Time
	From, To time.Time
}

// OverviewSpan is what the overview counts: the whole UTC days Days, plus
// the pieces of hours at the range's ends.
type OverviewSpan struct {
	Days   []time.Time
	Pieces []Piece
	Edges  []Edge
}

func (s OverviewSpan) pieceColumns() (hours []time.Time, lo, hi, sign, edge []int32) {
	for _, p := range s.Pieces {
		hours, lo, hi, sign, edge = append(hours, p.Hour), append(lo, p.Lo), append(hi, p.Hi), append(sign, p.Sign), append(edge, p.Edge)
	}
	return hours, lo, hi, sign, edge
}

// OverviewKeys reads every country (c) and source (s) of the workspace's
// span, scans descending, then key.
func OverviewKeys(ctx context.Context, db store.DBTX, ws uuid.UUID, span OverviewSpan) ([]Key, error) {
	hours, lo, hi, sign, _ := span.pieceColumns()
	rows, err := scandb.New().AnalyticsOverviewKeys(ctx, db, scandb.AnalyticsOverviewKeysParams{
		WorkspaceID: ws, Days: span.Days, PieceHours: hours, PieceLo: lo, PieceHi: hi, PieceSign: sign,
	})
	return convert(rows, func(r scandb.AnalyticsOverviewKeysRow) Key { return Key(r) }), store.InterpretError(err)
}

// LinkScans are a link's (Key: its uuid) human scans over some days.
type LinkScans struct {
	Key   string
	Scans int64
}

// OverviewTop reads the at most limit links of the workspace with the most
// scans in span, scans descending, then key.
func OverviewTop(ctx context.Context, db store.DBTX, ws uuid.UUID, span OverviewSpan, limit int64) ([]LinkScans, error) {
	hours, lo, hi, sign, edge := span.pieceColumns()
	p := scandb.AnalyticsOverviewTopParams{
		WorkspaceID: ws, Days: span.Days, MaxLinks: limit,
		PieceHours: hours, PieceLo: lo, PieceHi: hi, PieceSign: sign, PieceEdge: edge,
	}
	for _, e := range span.Edges {
		p.EdgeDays, p.EdgeFrom, p.EdgeTo, p.EdgeNums = append(p.EdgeDays, e.Day), append(p.EdgeFrom, e.From), append(p.EdgeTo, e.To), append(p.EdgeNums, e.Num)
	}
	rows, err := scandb.New().AnalyticsOverviewTop(ctx, db, p)
	return convert(rows, func(r scandb.AnalyticsOverviewTopRow) LinkScans { return LinkScans(r) }), store.InterpretError(err)
}

// LinkName is how the overview names one of its top links.
type LinkName struct {
	ID        uuid.UUID
	Code      string
	Title     *string
	Domain    *string
	DeletedAt *time.Time
}

// LinkNames reads the names of the workspace's links ids, deleted ones
// too (the overview says so); an id of no row is left out. The links
// table is internal/link's, read here because link imports analytics
// (its targeting names analytics' devices) and analytics cannot import it.
func LinkNames(ctx context.Context, db store.DBTX, ws uuid.UUID, ids []uuid.UUID) ([]LinkName, error) {
	rows, err := scandb.New().AnalyticsOverviewLinks(ctx, db, scandb.AnalyticsOverviewLinksParams{WorkspaceID: ws, Ids: ids})
	return convert(rows, func(r scandb.AnalyticsOverviewLinksRow) LinkName { return LinkName(r) }), store.InterpretError(err)
}

func convert[R, T any](rows []R, f func(R) T) []T {
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}
