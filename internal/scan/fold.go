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

type hourCounts struct {
	scans, bots, uniq, dayFirst, dayLast int64
}

type visitorKey struct {
	link uuid.UUID
	day  int64 // Unix seconds of the UTC day's start
	hash [16]byte
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
	visitors := map[visitorKey]int32{}
	hourly := map[keyKey]int64{}
	daily := map[keyKey]int64{}
	overview := map[keyKey]int64{} // keyKey.link is the workspace here
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
		link, hour, n := x.LinkID, x.Hour.UTC(), x.Scans
		workspace[link] = x.WorkspaceID
		c := counts(hourKey{link, hour.Unix()})
		if x.Bot {
			c.bots += n
			continue
		}
		f.Scans += n
		c.scans += n
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
		visitors[visitorKey{link, day.Unix(), hash}] |= 1 << hour.Hour()
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
		for _, d := range [...][2]string{{dimDevice, x.Device}, {dimOS, x.OS}, {dimBrowser, x.Browser}, {dimReferrer, referrer}, {dimCountry, country}, {dimSource, x.Source}, {dimVariant, variant}} {
			hourly[keyKey{link, hour.Unix(), d[0], d[1]}] += n
			daily[keyKey{link, day.Unix(), d[0], d[1]}] += n
		}
		ws := x.WorkspaceID
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
			p.Hours = append(p.Hours, visitors[k])
		}
		changed, err := q.ScanVisitorDaysUpsert(ctx, tx, p)
		if err != nil {
			return f, store.InterpretError(err)
		}
		for _, v := range changed {
			visitorDelta(v.LinkID, v.Day.Unix(), uint32(v.OldHours), uint32(v.NewHours), counts)
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
	}
	if err := q.ScanRollupsUpsert(ctx, tx, hp); err != nil {
		return f, store.InterpretError(err)
	}
	if len(hourly) == 0 {
		return f, nil
	}
	h := keyColumns(hourly, workspace)
	if err := q.ScanRollupKeysHourlyUpsert(ctx, tx, scandb.ScanRollupKeysHourlyUpsertParams{
		LinkIds: h.links, Hours: h.ats, Dims: h.dims, Keys: h.keys, WorkspaceIds: h.workspaces, Scans: h.scans,
	}); err != nil {
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

// linkCount is one link's human scans in a fold.
type linkCount struct {
	scans  int64
	lastAt time.Time
}

// visitorDelta turns one visitor-day's hour bits, before and after the
// batch, into counter changes: every newly set hour gains a unique
// visitor, and the hours of the visitor's first and last scan of the day
// move when the lowest or highest bit does.
func visitorDelta(link uuid.UUID, day int64, old, now uint32, counts func(hourKey) *hourCounts) {
	at := func(h int) *hourCounts { return counts(hourKey{link, day + int64(h)*3600}) }
	for added := now &^ old; added != 0; added &= added - 1 {
		at(bits.TrailingZeros32(added)).uniq++
	}
	first, last := bits.TrailingZeros32(now), 31-bits.LeadingZeros32(now)
	if old == 0 {
		at(first).dayFirst++
		at(last).dayLast++
		return
	}
	if oldFirst := bits.TrailingZeros32(old); oldFirst != first {
		at(oldFirst).dayFirst--
		at(first).dayFirst++
	}
	if oldLast := 31 - bits.LeadingZeros32(old); oldLast != last {
		at(oldLast).dayLast--
		at(last).dayLast++
	}
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
