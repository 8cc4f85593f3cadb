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
// chunks of whole writer transactions. foldTake is about how many of a
// chunk's scans are summed at a time (a part of its links), and
// upsertPiece how many rows one upsert statement writes at most: 50,000
// scans of distinct visitors have some 200,000 breakdown rows, whose sums
// and arguments all at once took 250 MiB of heap (BenchmarkFoldChunkMemory).
// A piece of 5,000 rows still took 3–4 MiB while it was sent (the rows, pgx's
// encoding of the arguments and the message it goes out in), and the heap's
// peak in BenchmarkFoldChunkMemory was 42 MiB; with 1,000 it is 26 MiB, in
// no more time. (Variables for the tests, which fold in tiny pieces.)
var foldChunk, foldTake, upsertPiece = 50_000, 10_000, 1000

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
			end, err := q.ScanFoldChunkEnd(ctx, tx, scandb.ScanFoldChunkEndParams{FromXid: state.FoldedBelow, TargetXid: target.Target, Rows: int32(foldChunk)})
			if err != nil {
				return store.InterpretError(err)
			}
			// The chunk's links are folded in parts of about foldTake
			// scans, each read, summed and written before the next: all
			// of a link's scans are in one part, so no row is written
			// twice, and only one part's sums are in memory at a time.
			n, err := q.ScanFoldCount(ctx, tx, scandb.ScanFoldCountParams{FromXid: state.FoldedBelow, UptoXid: end})
			if err != nil {
				return store.InterpretError(err)
			}
			parts := max(1, (int(n)+foldTake-1)/foldTake)
			for part := range parts {
				rows, err := q.ScanFoldTake(ctx, tx, scandb.ScanFoldTakeParams{FromXid: state.FoldedBelow, UptoXid: end, Parts: int32(parts), Part: int32(part)})
				if err != nil {
					return store.InterpretError(err)
				}
				sums := newChunkSums()
				sums.add(rows)
				pf, err := sums.write(ctx, tx)
				if err != nil {
					return err
				}
				f.Rows, f.Scans, f.Links = f.Rows+pf.Rows, f.Scans+pf.Scans, f.Links+pf.Links
			}
			if f.Scans > 0 {
				// Instances that serve links from memory read the new
				// counters once (internal/link reads.go).
				if err := store.Notify(ctx, tx, link.CountsChannel, ""); err != nil {
					return err
				}
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

// chunkSums is what a chunk's scans add to the rollups and the links'
// counts, summed as its rows are read.
type chunkSums struct {
	f             Folded
	workspace     map[uuid.UUID]uuid.UUID
	hours         map[hourKey]*hourCounts
	visitors      map[visitorKey]quarters
	hourly        map[keyKey]*[4]int64 // scans, and those before the quarter marks; the daily rows are their sums
	overview      map[keyKey]int64     // keyKey.link is the workspace here
	overviewHours map[keyKey]*[4]int64 // the same, per hour: scans and those before the quarter marks
	links         map[uuid.UUID]*linkCount
}

func newChunkSums() *chunkSums {
	return &chunkSums{
		workspace: map[uuid.UUID]uuid.UUID{}, hours: map[hourKey]*hourCounts{}, visitors: map[visitorKey]quarters{},
		hourly: map[keyKey]*[4]int64{}, overview: map[keyKey]int64{}, overviewHours: map[keyKey]*[4]int64{},
		links: map[uuid.UUID]*linkCount{},
	}
}

// hour is the counters of one link's hour, made on first use.
func (s *chunkSums) hour(k hourKey) *hourCounts {
	c := s.hours[k]
	if c == nil {
		c = &hourCounts{}
		s.hours[k] = c
	}
	return c
}

// add sums taken rows.
func (s *chunkSums) add(rows []scandb.ScanFoldTakeRow) {
	s.f.Rows += len(rows)
	for _, x := range rows {
		link, quarter, n := x.LinkID, x.Quarter.UTC(), x.Scans
		hour := quarter.Truncate(time.Hour)
		qi := quarter.Minute() / 15 // the quarter of the hour
		s.workspace[link] = x.WorkspaceID
		c := s.hour(hourKey{link, hour.Unix()})
		if x.Bot {
			c.bots += n
			continue
		}
		s.f.Scans += n
		c.scans += n
		for k := qi; k < 3; k++ {
			c.scansQ[k] += n // before the marks after this quarter
		}
		lc := s.links[link]
		if lc == nil {
			lc = &linkCount{}
			s.links[link] = lc
		}
		lc.scans += n
		if x.LastAt.After(lc.lastAt) {
			lc.lastAt = x.LastAt
		}
		day := time.Date(hour.Year(), hour.Month(), hour.Day(), 0, 0, 0, 0, time.UTC)
		var hash [16]byte
		copy(hash[:], x.VisitorHash)
		vk := visitorKey{link, day.Unix(), hash}
		vq := s.visitors[vk]
		vq.set(hour.Hour()*4 + qi)
		s.visitors[vk] = vq
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
			addQuarters(s.hourly, keyKey{link, hour.Unix(), d[0], d[1]}, qi, n)
			if workspaceHours && (d[0] == dimCountry || d[0] == dimSource) {
				addQuarters(s.overviewHours, keyKey{ws, hour.Unix(), d[0], d[1]}, qi, n)
			}
		}
		s.overview[keyKey{ws, day.Unix(), dimCountry, country}] += n
		s.overview[keyKey{ws, day.Unix(), dimSource, x.Source}] += n
		s.overview[keyKey{ws, day.Unix(), dimLink, link.String()}] += n
	}
}

// write adds the sums to the rollups and the links' counts.
func (s *chunkSums) write(ctx context.Context, tx pgx.Tx) (Folded, error) {
	q := scandb.New()
	f := s.f
	f.Links = len(s.workspace)
	if f.Rows == 0 {
		return f, nil
	}
	workspace, hours, visitors, hourly, links := s.workspace, s.hours, s.visitors, s.hourly, s.links

	// Each table's rows go in pieces of upsertPiece, in key order, so that
	// concurrent folds lock rows in the same order and the statements'
	// arguments (and pgx's encoding of them) stay small.
	vkeys := sortedKeys(visitors, func(a, b visitorKey) int {
		return cmp.Or(bytes.Compare(a.link[:], b.link[:]), cmp.Compare(a.day, b.day), bytes.Compare(a.hash[:], b.hash[:]))
	})
	err := inPieces(vkeys, func(part []visitorKey) error {
		n := len(part)
		p := scandb.ScanVisitorDaysUpsertParams{
			LinkIds: make([]uuid.UUID, 0, n), Days: make([]time.Time, 0, n), VisitorHashes: make([][]byte, 0, n),
			WorkspaceIds: make([]uuid.UUID, 0, n), Hours: make([]int32, 0, n), QuartersAm: make([]int64, 0, n), QuartersPm: make([]int64, 0, n),
		}
		for _, k := range part {
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
			return store.InterpretError(err)
		}
		for _, v := range changed {
			visitorDelta(v.LinkID, v.Day.Unix(), quarters{uint64(v.OldAm), uint64(v.OldPm)}, quarters{uint64(v.NewAm), uint64(v.NewPm)}, s.hour)
		}
		return nil
	})
	if err != nil {
		return f, err
	}

	hkeys := sortedKeys(hours, func(a, b hourKey) int {
		return cmp.Or(bytes.Compare(a.link[:], b.link[:]), cmp.Compare(a.hour, b.hour))
	})
	err = inPieces(hkeys, func(part []hourKey) error {
		n := len(part)
		col := func() []int64 { return make([]int64, 0, n) }
		hp := scandb.ScanRollupsUpsertParams{
			LinkIds: make([]uuid.UUID, 0, n), Hours: make([]time.Time, 0, n), WorkspaceIds: make([]uuid.UUID, 0, n),
			Scans: col(), Bots: col(), Uniq: col(), DayFirst: col(), DayLast: col(),
			Scans15: col(), Scans30: col(), Scans45: col(), Uniq15: col(), Uniq30: col(), Uniq45: col(),
			First15: col(), First30: col(), First45: col(), Last15: col(), Last30: col(), Last45: col(),
		}
		for _, k := range part {
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
		return store.InterpretError(q.ScanRollupsUpsert(ctx, tx, hp))
	})
	if err != nil {
		return f, err
	}
	if len(hourly) == 0 {
		return f, nil
	}
	kkeys := sortedKeys(hourly, compareKeyKey)
	err = inPieces(kkeys, func(part []keyKey) error {
		n := len(part)
		col := func() []int64 { return make([]int64, 0, n) }
		kh := scandb.ScanRollupKeysHourlyUpsertParams{
			LinkIds: make([]uuid.UUID, 0, n), Hours: make([]time.Time, 0, n), Dims: make([]string, 0, n), Keys: make([]string, 0, n),
			WorkspaceIds: make([]uuid.UUID, 0, n), Scans: col(), Scans15: col(), Scans30: col(), Scans45: col(),
		}
		for _, k := range part {
			c := hourly[k]
			kh.LinkIds, kh.Hours, kh.Dims, kh.Keys = append(kh.LinkIds, k.link), append(kh.Hours, time.Unix(k.at, 0).UTC()), append(kh.Dims, k.dim), append(kh.Keys, k.key)
			kh.WorkspaceIds = append(kh.WorkspaceIds, workspace[k.link])
			kh.Scans, kh.Scans15, kh.Scans30, kh.Scans45 = append(kh.Scans, c[0]), append(kh.Scans15, c[1]), append(kh.Scans30, c[2]), append(kh.Scans45, c[3])
		}
		return store.InterpretError(q.ScanRollupKeysHourlyUpsert(ctx, tx, kh))
	})
	if err != nil {
		return f, err
	}
	// A day's rows are the sums of its hours': the hourly keys, sorted by
	// day instead of hour, each run of one (link, day, dim, key) added up
	// in place.
	day := func(k keyKey) keyKey { k.at -= k.at % 86400; return k }
	slices.SortFunc(kkeys, func(a, b keyKey) int { return compareKeyKey(day(a), day(b)) })
	dsums := make([]int64, 0, len(kkeys))
	dkeys := kkeys[:0]
	for _, k := range kkeys {
		n := hourly[k][0]
		if d := day(k); len(dkeys) > 0 && dkeys[len(dkeys)-1] == d {
			dsums[len(dsums)-1] += n
		} else {
			dkeys, dsums = append(dkeys, d), append(dsums, n)
		}
	}
	for lo := 0; lo < len(dkeys); lo += upsertPiece {
		part, scans := dkeys[lo:min(lo+upsertPiece, len(dkeys))], dsums[lo:min(lo+upsertPiece, len(dkeys))]
		n := len(part)
		p := scandb.ScanRollupKeysDailyUpsertParams{
			LinkIds: make([]uuid.UUID, 0, n), Days: make([]time.Time, 0, n), Dims: make([]string, 0, n), Keys: make([]string, 0, n),
			WorkspaceIds: make([]uuid.UUID, 0, n), Scans: scans,
		}
		for _, k := range part {
			p.LinkIds, p.Days, p.Dims, p.Keys = append(p.LinkIds, k.link), append(p.Days, time.Unix(k.at, 0).UTC()), append(p.Dims, k.dim), append(p.Keys, k.key)
			p.WorkspaceIds = append(p.WorkspaceIds, workspace[k.link])
		}
		if err := q.ScanRollupKeysDailyUpsert(ctx, tx, p); err != nil {
			return f, store.InterpretError(err)
		}
	}
	if err := upsertOverview(ctx, tx, s.overview); err != nil {
		return f, err
	}
	if err := upsertOverviewHours(ctx, tx, s.overviewHours); err != nil {
		return f, err
	}
	err = inPieces(sortedKeys(links, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) }), func(part []uuid.UUID) error {
		n := len(part)
		lp := scandb.LinkAddScansParams{LinkIds: make([]uuid.UUID, 0, n), Counts: make([]int64, 0, n), LastAts: make([]time.Time, 0, n)}
		for _, id := range part {
			lp.LinkIds = append(lp.LinkIds, id)
			lp.Counts = append(lp.Counts, links[id].scans)
			lp.LastAts = append(lp.LastAts, links[id].lastAt.UTC())
		}
		return store.InterpretError(q.LinkAddScans(ctx, tx, lp))
	})
	return f, err
}

// inPieces calls write with keys in consecutive pieces of at most
// upsertPiece, stopping at the first error.
func inPieces[K any](keys []K, write func(part []K) error) error {
	for lo := 0; lo < len(keys); lo += upsertPiece {
		if err := write(keys[lo:min(lo+upsertPiece, len(keys))]); err != nil {
			return err
		}
	}
	return nil
}

// upsertOverview adds the fold's scans to the workspace overview, one row
// per workspace, day and key, in key order like the other upserts.
func upsertOverview(ctx context.Context, tx pgx.Tx, counts map[keyKey]int64) error {
	return inPieces(sortedKeys(counts, compareKeyKey), func(part []keyKey) error {
		n := len(part)
		p := scandb.ScanWorkspaceDaysUpsertParams{
			WorkspaceIds: make([]uuid.UUID, 0, n), Days: make([]time.Time, 0, n), Dims: make([]string, 0, n), Keys: make([]string, 0, n), Scans: make([]int64, 0, n),
		}
		for _, k := range part {
			p.WorkspaceIds = append(p.WorkspaceIds, k.link)
			p.Days = append(p.Days, time.Unix(k.at, 0).UTC())
			p.Dims = append(p.Dims, k.dim)
			p.Keys = append(p.Keys, k.key)
			p.Scans = append(p.Scans, counts[k])
		}
		return store.InterpretError(scandb.New().ScanWorkspaceDaysUpsert(ctx, tx, p))
	})
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
	return inPieces(sortedKeys(counts, compareKeyKey), func(part []keyKey) error {
		n := len(part)
		col := func() []int64 { return make([]int64, 0, n) }
		p := scandb.ScanWorkspaceHoursUpsertParams{
			WorkspaceIds: make([]uuid.UUID, 0, n), Dims: make([]string, 0, n), Hours: make([]time.Time, 0, n), Keys: make([]string, 0, n),
			Scans: col(), Scans15: col(), Scans30: col(), Scans45: col(),
		}
		for _, k := range part {
			c := counts[k]
			p.WorkspaceIds = append(p.WorkspaceIds, k.link)
			p.Dims = append(p.Dims, k.dim)
			p.Hours = append(p.Hours, time.Unix(k.at, 0).UTC())
			p.Keys = append(p.Keys, k.key)
			p.Scans, p.Scans15, p.Scans30, p.Scans45 = append(p.Scans, c[0]), append(p.Scans15, c[1]), append(p.Scans30, c[2]), append(p.Scans45, c[3])
		}
		return store.InterpretError(scandb.New().ScanWorkspaceHoursUpsert(ctx, tx, p))
	})
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
