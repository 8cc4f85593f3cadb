package scan

import (
	"bytes"
	"cmp"
	"context"
	"math/bits"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/scan/internal/scandb"
	"github.com/linkqr/linkqr/internal/store"
)

// The analytics rollups (db/migrations/00012_scan_rollups.sql) and the
// links' scan_count are not kept by the scan writer, which only appends
// scans: Fold reads the scans written since a watermark every few seconds
// (db/migrations/00020_scan_watermark.sql) and adds them set-based, so all
// the scans of one link, hour and key in that window cost one row update
// together. docs/scan-pipeline.md has the measurements behind this choice.

// Dimension codes of the breakdown rollups.
const (
	dimDevice   = "d"
	dimOS       = "o"
	dimBrowser  = "b"
	dimReferrer = "r"
	dimCountry  = "c"
	dimSource   = "s"
	dimVariant  = "v"
	// dimLink is the workspace overview's breakdown by link (key: the
	// link's uuid), beside its countries and sources.
	dimLink = "l"
)

// DirectReferrer is the breakdown key of scans without a referrer.
const DirectReferrer = "(direct)"

// DefaultVariant is the breakdown key of scans served by their link's own
// target_url (variant NULL).
const DefaultVariant = "(default)"

// UnknownCountry is the breakdown key of scans whose country could not be
// told (geo.Unknown).
const UnknownCountry = "(unknown)"

type hourKey struct {
	link uuid.UUID
	hour int64 // Unix seconds of the hour's start
}

// hourCounts are one hour row's counters; the arrays are at the quarter
// marks 15, 30 and 45 minutes into the hour (migration 00044): scans
// before the mark, distinct visitors of the hour-long window starting at
// it, visitors first seen that UTC day in the hour before it, and last
// seen in the hour at or after it.
type hourCounts struct {
	scans, bots, uniq, dayFirst, dayLast int64
	scansQ, uniqQ, firstQ, lastQ         [3]int64
}

type visitorKey struct {
	link uuid.UUID
	day  int64 // Unix seconds of the UTC day's start
	hash [16]byte
}

// quarters is a visitor-day's quarter-hours: bit q of [0] is minutes
// [15q, 15q+15) of the UTC day for q < 48, bit q-48 of [1] the others.
type quarters [2]uint64

func (q quarters) has(i int) bool { return q[i/48]>>(i%48)&1 != 0 }

func (q *quarters) set(i int) { q[i/48] |= 1 << (i % 48) }

// any tells whether q has a quarter in [lo, hi).
func (q quarters) any(lo, hi int) bool {
	for i := max(lo, 0); i < min(hi, 96); i++ {
		if q.has(i) {
			return true
		}
	}
	return false
}

func (q quarters) first() int {
	if q[0] != 0 {
		return bits.TrailingZeros64(q[0])
	}
	return 48 + bits.TrailingZeros64(q[1])
}

func (q quarters) last() int {
	if q[1] != 0 {
		return 48 + 63 - bits.LeadingZeros64(q[1])
	}
	return 63 - bits.LeadingZeros64(q[0])
}

type keyKey struct {
	link     uuid.UUID
	at       int64 // hour or day start, Unix seconds
	dim, key string
}

// Folded is what one fold added.
type Folded struct {
	Rows  int // grouped scans (scans of one visitor, link, hour and key count once)
	Scans int64
	Links int
	// AsOf is the watermark's time after the fold: every scan recorded
	// before it is in the rollups (zero when the fold did not finish).
	AsOf time.Time
}

// foldChunk is about how many scans one fold transaction takes: a backlog
// (after an outage, or a long interval under heavy traffic) is folded in
// chunks of whole writer transactions, in bounded memory.
const foldChunk = 50_000

// Fold adds every scan recorded since the watermark to the rollups and the
// links' scan_count, chunk by chunk, each chunk in one transaction under
// the fold lock that also moves the watermark past it. When another
// instance holds the lock it returns with what it has folded so far: the
// rest is that fold's.
func Fold(ctx context.Context, db *store.DB) (Folded, error) {
	var total Folded
	q := scandb.New()
	target, err := q.ScanFoldTarget(ctx, db.Pool())
	if err != nil {
		return total, store.InterpretError(err)
	}
	for {
		var f Folded
		done := false
		err := db.InTx(ctx, func(tx pgx.Tx) error {
			ok, err := q.ScanFoldLock(ctx, tx)
			if err != nil || !ok {
				done = true
				return store.InterpretError(err)
			}
			state, err := q.ScanFoldState(ctx, tx)
			if err != nil {
				return store.InterpretError(err)
			}
			if state.FoldedBelow >= target.Target {
				done = true // another instance got there first
				return nil
			}
			end, err := q.ScanFoldChunkEnd(ctx, tx, scandb.ScanFoldChunkEndParams{FromXid: state.FoldedBelow, TargetXid: target.Target, Rows: foldChunk})
			if err != nil {
				return store.InterpretError(err)
			}
			rows, err := q.ScanFoldTake(ctx, tx, scandb.ScanFoldTakeParams{FromXid: state.FoldedBelow, UptoXid: end})
			if err != nil {
				return store.InterpretError(err)
			}
			if f, err = foldRows(ctx, tx, rows); err != nil {
				return err
			}
			advance := scandb.ScanFoldAdvanceParams{UptoXid: end}
			if end == target.Target {
				advance.At = &target.At
				f.AsOf, done = target.At.UTC(), true
			}
			return store.InterpretError(q.ScanFoldAdvance(ctx, tx, advance))
		})
		if err != nil {
			return total, err
		}
		total.Rows += f.Rows // counted once the chunk's transaction committed
		total.Scans += f.Scans
		total.Links += f.Links
		total.AsOf = f.AsOf
		if done {
			break
		}
	}
	return total, nil
}

// foldRows adds the taken rows to the rollups and the links' counts.
func foldRows(ctx context.Context, tx pgx.Tx, rows []scandb.ScanFoldTakeRow) (Folded, error) {
	q := scandb.New()
	f := Folded{Rows: len(rows)}
	workspace := map[uuid.UUID]uuid.UUID{}
	hours := map[hourKey]*hourCounts{}
	visitors := map[visitorKey]quarters{}
	hourly := map[keyKey]*[4]int64{} // scans, and those before the quarter marks
	daily := map[keyKey]int64{}
	overview := map[keyKey]int64{}          // keyKey.link is the workspace here
	overviewHours := map[keyKey]*[4]int64{} // the same, per hour: scans and those before the quarter marks
	links := map[uuid.UUID]*linkCount{}
	counts := func(k hourKey) *hourCounts {
		c := hours[k]
		if c == nil {
			c = &hourCounts{}
			hours[k] = c
		}
		return c
	}
	for _, x := range rows {
		link, quarter, n := x.LinkID, x.Quarter.UTC(), x.Scans
		hour := quarter.Truncate(time.Hour)
		qi := quarter.Minute() / 15 // the quarter of the hour
		workspace[link] = x.WorkspaceID
		c := counts(hourKey{link, hour.Unix()})
		if x.Bot {
			c.bots += n
			continue
		}
		f.Scans += n
		c.scans += n
		for k := qi; k < 3; k++ {
			c.scansQ[k] += n // before the marks after this quarter
		}
		lc := links[link]
		if lc == nil {
			lc = &linkCount{}
			links[link] = lc
		}
		lc.scans += n
		if x.LastAt.After(lc.lastAt) {
			lc.lastAt = x.LastAt
		}
		day := time.Date(hour.Year(), hour.Month(), hour.Day(), 0, 0, 0, 0, time.UTC)
		var hash [16]byte
		copy(hash[:], x.VisitorHash)
		vq := visitors[visitorKey{link, day.Unix(), hash}]
		vq.set(hour.Hour()*4 + qi)
		visitors[visitorKey{link, day.Unix(), hash}] = vq
		referrer := DirectReferrer
		if x.ReferrerHost != nil {
			referrer = *x.ReferrerHost
		}
		country := UnknownCountry
		if x.Country != nil {
			country = *x.Country
		}
		variant := DefaultVariant
		if x.Variant != nil {
			variant = *x.Variant
		}
		ws := x.WorkspaceID
		for _, d := range [...][2]string{{dimDevice, x.Device}, {dimOS, x.OS}, {dimBrowser, x.Browser}, {dimReferrer, referrer}, {dimCountry, country}, {dimSource, x.Source}, {dimVariant, variant}} {
			addQuarters(hourly, keyKey{link, hour.Unix(), d[0], d[1]}, qi, n)
			daily[keyKey{link, day.Unix(), d[0], d[1]}] += n
			if workspaceHours && (d[0] == dimCountry || d[0] == dimSource) {
				addQuarters(overviewHours, keyKey{ws, hour.Unix(), d[0], d[1]}, qi, n)
			}
		}
		overview[keyKey{ws, day.Unix(), dimCountry, country}] += n
		overview[keyKey{ws, day.Unix(), dimSource, x.Source}] += n
		overview[keyKey{ws, day.Unix(), dimLink, link.String()}] += n
	}
	f.Links = len(workspace)
	if len(rows) == 0 {
		return f, nil
	}

	if len(visitors) > 0 {
		vkeys := sortedKeys(visitors, func(a, b visitorKey) int {
			return cmp.Or(bytes.Compare(a.link[:], b.link[:]), cmp.Compare(a.day, b.day), bytes.Compare(a.hash[:], b.hash[:]))
		})
		p := scandb.ScanVisitorDaysUpsertParams{}
		for _, k := range vkeys {
			p.LinkIds = append(p.LinkIds, k.link)
			p.Days = append(p.Days, time.Unix(k.day, 0).UTC())
			p.VisitorHashes = append(p.VisitorHashes, k.hash[:])
			p.WorkspaceIds = append(p.WorkspaceIds, workspace[k.link])
			vq := visitors[k]
			var hours int32
			for h := range 24 {
				if vq.any(4*h, 4*h+4) {
					hours |= 1 << h
				}
			}
			p.Hours = append(p.Hours, hours)
			p.QuartersAm = append(p.QuartersAm, int64(vq[0]))
			p.QuartersPm = append(p.QuartersPm, int64(vq[1]))
		}
		changed, err := q.ScanVisitorDaysUpsert(ctx, tx, p)
		if err != nil {
			return f, store.InterpretError(err)
		}
		for _, v := range changed {
			visitorDelta(v.LinkID, v.Day.Unix(), quarters{uint64(v.OldAm), uint64(v.OldPm)}, quarters{uint64(v.NewAm), uint64(v.NewPm)}, counts)
		}
	}

	hkeys := sortedKeys(hours, func(a, b hourKey) int {
		return cmp.Or(bytes.Compare(a.link[:], b.link[:]), cmp.Compare(a.hour, b.hour))
	})
	hp := scandb.ScanRollupsUpsertParams{}
	for _, k := range hkeys {
		c := hours[k]
		hp.LinkIds = append(hp.LinkIds, k.link)
		hp.Hours = append(hp.Hours, time.Unix(k.hour, 0).UTC())
		hp.WorkspaceIds = append(hp.WorkspaceIds, workspace[k.link])
		hp.Scans = append(hp.Scans, c.scans)
		hp.Bots = append(hp.Bots, c.bots)
		hp.Uniq = append(hp.Uniq, c.uniq)
		hp.DayFirst = append(hp.DayFirst, c.dayFirst)
		hp.DayLast = append(hp.DayLast, c.dayLast)
		hp.Scans15, hp.Scans30, hp.Scans45 = append(hp.Scans15, c.scansQ[0]), append(hp.Scans30, c.scansQ[1]), append(hp.Scans45, c.scansQ[2])
		hp.Uniq15, hp.Uniq30, hp.Uniq45 = append(hp.Uniq15, c.uniqQ[0]), append(hp.Uniq30, c.uniqQ[1]), append(hp.Uniq45, c.uniqQ[2])
		hp.First15, hp.First30, hp.First45 = append(hp.First15, c.firstQ[0]), append(hp.First30, c.firstQ[1]), append(hp.First45, c.firstQ[2])
		hp.Last15, hp.Last30, hp.Last45 = append(hp.Last15, c.lastQ[0]), append(hp.Last30, c.lastQ[1]), append(hp.Last45, c.lastQ[2])
	}
	if err := q.ScanRollupsUpsert(ctx, tx, hp); err != nil {
		return f, store.InterpretError(err)
	}
	if len(hourly) == 0 {
		return f, nil
	}
	kh := scandb.ScanRollupKeysHourlyUpsertParams{}
	for _, k := range sortedKeys(hourly, compareKeyKey) {
		c := hourly[k]
		kh.LinkIds, kh.Hours, kh.Dims, kh.Keys = append(kh.LinkIds, k.link), append(kh.Hours, time.Unix(k.at, 0).UTC()), append(kh.Dims, k.dim), append(kh.Keys, k.key)
		kh.WorkspaceIds = append(kh.WorkspaceIds, workspace[k.link])
		kh.Scans, kh.Scans15, kh.Scans30, kh.Scans45 = append(kh.Scans, c[0]), append(kh.Scans15, c[1]), append(kh.Scans30, c[2]), append(kh.Scans45, c[3])
	}
	if err := q.ScanRollupKeysHourlyUpsert(ctx, tx, kh); err != nil {
		return f, store.InterpretError(err)
	}
	d := keyColumns(daily, workspace)
	if err := q.ScanRollupKeysDailyUpsert(ctx, tx, scandb.ScanRollupKeysDailyUpsertParams{
		LinkIds: d.links, Days: d.ats, Dims: d.dims, Keys: d.keys, WorkspaceIds: d.workspaces, Scans: d.scans,
	}); err != nil {
		return f, store.InterpretError(err)
	}
	if err := upsertOverview(ctx, tx, overview); err != nil {
		return f, err
	}
	if err := upsertOverviewHours(ctx, tx, overviewHours); err != nil {
		return f, err
	}
	lp := scandb.LinkAddScansParams{}
	for _, id := range sortedKeys(links, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) }) {
		lp.LinkIds = append(lp.LinkIds, id)
		lp.Counts = append(lp.Counts, links[id].scans)
		lp.LastAts = append(lp.LastAts, links[id].lastAt.UTC())
	}
	if err := q.LinkAddScans(ctx, tx, lp); err != nil {
		return f, store.InterpretError(err)
	}
	// Instances that serve links from memory read the new counters once
	// (internal/link reads.go).
	return f, store.Notify(ctx, tx, link.CountsChannel, "")
}

// upsertOverview adds the fold's scans to the workspace overview, one row
// per workspace, day and key, in key order like the other upserts.
func upsertOverview(ctx context.Context, tx pgx.Tx, counts map[keyKey]int64) error {
	p := scandb.ScanWorkspaceDaysUpsertParams{}
	for _, k := range sortedKeys(counts, compareKeyKey) {
		p.WorkspaceIds = append(p.WorkspaceIds, k.link)
		p.Days = append(p.Days, time.Unix(k.at, 0).UTC())
		p.Dims = append(p.Dims, k.dim)
		p.Keys = append(p.Keys, k.key)
		p.Scans = append(p.Scans, counts[k])
	}
	return store.InterpretError(scandb.New().ScanWorkspaceDaysUpsert(ctx, tx, p))
}

// addQuarters adds n scans of quarter qi (0-3) of an hour to the row k of
// counts: its scans and those before the marks 15, 30 and 45 minutes in.
func addQuarters(counts map[keyKey]*[4]int64, k keyKey, qi int, n int64) {
	c := counts[k]
	if c == nil {
		c = &[4]int64{}
		counts[k] = c
	}
	c[0] += n
	for m := qi + 1; m < 4; m++ {
		c[m] += n // before the marks after this quarter
	}
}

// workspaceHours turns on the fold's rows of scan_workspace_hours (the
// overview in a time zone); BenchmarkFold turns it off to measure what
// they cost.
var workspaceHours = true

// upsertOverviewHours adds the fold's scans to the overview's hours, one
// row per workspace, hour, country and source, in key order.
func upsertOverviewHours(ctx context.Context, tx pgx.Tx, counts map[keyKey]*[4]int64) error {
	if len(counts) == 0 {
		return nil
	}
	p := scandb.ScanWorkspaceHoursUpsertParams{}
	for _, k := range sortedKeys(counts, compareKeyKey) {
		c := counts[k]
		p.WorkspaceIds = append(p.WorkspaceIds, k.link)
		p.Dims = append(p.Dims, k.dim)
		p.Hours = append(p.Hours, time.Unix(k.at, 0).UTC())
		p.Keys = append(p.Keys, k.key)
		p.Scans, p.Scans15, p.Scans30, p.Scans45 = append(p.Scans, c[0]), append(p.Scans15, c[1]), append(p.Scans30, c[2]), append(p.Scans45, c[3])
	}
	return store.InterpretError(scandb.New().ScanWorkspaceHoursUpsert(ctx, tx, p))
}

// linkCount is one link's human scans in a fold.
type linkCount struct {
	scans  int64
	lastAt time.Time
}

// visitorDelta turns one visitor-day's quarter-hours, before and after
// the batch, into counter changes: every hour (and every hour-long window
// starting 15, 30 or 45 minutes into an hour, which may begin in the day
// before) that the visitor enters gains a unique visitor, and the
// first-seen and last-seen counters move when the first or last quarter
// does.
func visitorDelta(link uuid.UUID, day int64, old, now quarters, counts func(hourKey) *hourCounts) {
	at := func(h int) *hourCounts { return counts(hourKey{link, day + int64(h)*3600}) }
	for h := -1; h < 24; h++ {
		for k := 0; k < 4; k++ {
			if h < 0 && k == 0 {
				continue
			}
			lo, hi := 4*h+k, 4*h+k+4
			if old.any(lo, hi) || !now.any(lo, hi) {
				continue
			}
			if k == 0 {
				at(h).uniq++
			} else {
				at(h).uniqQ[k-1]++
			}
		}
	}
	seen := func(q int, first bool, sign int64) {
		c, k := at(q/4), q%4
		if first {
			c.dayFirst += sign
			for m := k; m < 3; m++ {
				c.firstQ[m] += sign // first seen before the marks after q
			}
			return
		}
		c.dayLast += sign
		for m := 0; m < k; m++ {
			c.lastQ[m] += sign // last seen at or after the marks up to q
		}
	}
	if old != (quarters{}) {
		if old.first() != now.first() {
			seen(old.first(), true, -1)
			seen(now.first(), true, 1)
		}
		if old.last() != now.last() {
			seen(old.last(), false, -1)
			seen(now.last(), false, 1)
		}
		return
	}
	seen(now.first(), true, 1)
	seen(now.last(), false, 1)
}

// keyColumnSet is the columns of one breakdown upsert (hourly or daily),
// sorted so that concurrent upserts lock rows in the same order.
type keyColumnSet struct {
	links, workspaces []uuid.UUID
	ats               []time.Time
	dims, keys        []string
	scans             []int64
}

func keyColumns(counts map[keyKey]int64, workspace map[uuid.UUID]uuid.UUID) keyColumnSet {
	var c keyColumnSet
	for _, k := range sortedKeys(counts, compareKeyKey) {
		c.links = append(c.links, k.link)
		c.ats = append(c.ats, time.Unix(k.at, 0).UTC())
		c.dims = append(c.dims, k.dim)
		c.keys = append(c.keys, k.key)
		c.workspaces = append(c.workspaces, workspace[k.link])
		c.scans = append(c.scans, counts[k])
	}
	return c
}

func compareKeyKey(a, b keyKey) int {
	return cmp.Or(bytes.Compare(a.link[:], b.link[:]), cmp.Compare(a.at, b.at), cmp.Compare(a.dim, b.dim), cmp.Compare(a.key, b.key))
}

func sortedKeys[K comparable, V any](m map[K]V, compare func(a, b K) int) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compare)
	return keys
}

// RebuildRollups recomputes the analytics rollups, scan_count and
// last_scanned_at of one link (nil: of every link, one after the other)
// from raw scans and returns how many links it rebuilt; an unknown link is
// id.ErrNotFound. Each link is rebuilt in its own transaction under the
// fold lock (see rebuild_scan_rollups), so folds wait only while one link
// is rebuilt, and the redirect never waits.
func RebuildRollups(ctx context.Context, db *store.DB, link *uuid.UUID) (int, error) {
	q := scandb.New()
	ids, err := q.ScanRollupLinks(ctx, db.Conn(ctx), link)
	if err != nil {
		return 0, store.InterpretError(err)
	}
	if link != nil && len(ids) == 0 {
		return 0, id.ErrNotFound
	}
	for i, id := range ids {
		// READ COMMITTED: once the function holds the fold lock, its
		// statements see the watermark and rollups of the last fold.
		err := db.InTx(ctx, func(tx pgx.Tx) error {
			return store.InterpretError(q.ScanRollupsRebuild(ctx, tx, &id))
		})
		if err != nil {
			return i, err
		}
	}
	if link == nil {
		// Each link's rebuild moved only its own part of the workspace
		// overview; the whole of it is recomputed once at the end.
		err := db.InTx(ctx, func(tx pgx.Tx) error { return store.InterpretError(q.ScanWorkspaceDaysRebuild(ctx, tx)) })
		if err != nil {
			return len(ids), err
		}
	}
	return len(ids), nil
}
