package analytics

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/epochcache"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/scan/rollup"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/tz"
	"github.com/linkqr/linkqr/internal/validate"
)

// Interval is the width of a series bucket.
type Interval string

// Bucket widths, with the longest range each may cover (a request must not
// ask for hundreds of thousands of buckets).
const (
	Hour  Interval = "hour"
	Day   Interval = "day"
	Week  Interval = "week"
	Month Interval = "month"
)

var maxRange = map[Interval]time.Duration{
	Hour:  31 * 24 * time.Hour,
	Day:   400 * 24 * time.Hour,
	Week:  3 * 366 * 24 * time.Hour,
	Month: 10 * 366 * 24 * time.Hour,
}

// DefaultRange is the window when from is not given: from is to minus
// DefaultRange, rounded down to the hour, so that a default report reads
// whole hours from the rollups (a from inside an hour makes that hour's raw
// scans part of the answer).
const DefaultRange = 30 * 24 * time.Hour

// MaxBreakdownKeys bounds each breakdown list; keys beyond the top ones by
// scans are left out.
const MaxBreakdownKeys = 50

// Range is a validated analytics request: [From, To) in buckets of
// Interval, cut at Zone's local boundaries.
type Range struct {
	From, To time.Time
	Interval Interval
	// Zone cuts the buckets: days and hours start at its local midnights
	// and hours, weeks on its Mondays (the zero Zone is UTC).
	Zone tz.Zone
	// Open means to was not given: the range runs to the present, taken
	// when the report is computed (To is then that instant).
	Open bool
}

// ParseRange reads from, to, interval and timezone (defaults: the 30 days
// up to now, from the start of their first hour, by day, in zone, the
// workspace's) and rejects anything else, with pointers like /query/from.
func ParseRange(q url.Values, now time.Time, zone tz.Zone) (Range, error) {
	var errs validate.Errors
	for name, vs := range q {
		switch {
		case name != "from" && name != "to" && name != "interval" && name != "timezone":
			errs.Add("/query/"+name, "is not a known parameter")
		case len(vs) > 1:
			errs.Add("/query/"+name, validate.DetailRepeated)
		}
	}
	r := Range{To: now.UTC(), Interval: Day, Zone: zone}
	if v, ok := q["timezone"]; ok {
		z, err := tz.Parse(v[0])
		if err != nil {
			errs.Add("/query/timezone", "must be an IANA time zone name such as America/New_York or UTC")
		}
		r.Zone = z
	}
	if v, ok := q["interval"]; ok {
		r.Interval = Interval(v[0])
		if _, known := maxRange[r.Interval]; !known {
			errs.Add("/query/interval", "must be one of hour, day, week, month")
		}
	}
	parse := func(name string, into *time.Time) {
		if v, ok := q[name]; ok {
			t, err := time.Parse(time.RFC3339Nano, v[0])
			if err != nil {
				errs.Add("/query/"+name, "must be an RFC 3339 timestamp such as 2026-11-01T00:00:00Z")
				return
			}
			*into = t.UTC()
		}
	}
	parse("to", &r.To)
	_, given := q["to"]
	r.Open = !given
	r.From = Hour.Truncate(r.To.Add(-DefaultRange))
	parse("from", &r.From)
	if err := errs.Err(); err != nil {
		return r, err
	}
	if !r.From.Before(r.To) {
		errs.Add("/query/from", "must be before to")
	} else if limit := maxRange[r.Interval]; r.To.Sub(r.From) > limit {
		errs.Add("/query/from", fmt.Sprintf("the range may span at most %d days with interval=%s", int(limit.Hours()/24), r.Interval))
	}
	return r, errs.Err()
}

// Truncate returns the start of the UTC bucket containing t; weeks start on
// Monday, as PostgreSQL's date_trunc does.
func (i Interval) Truncate(t time.Time) time.Time { return i.TruncateIn(t, time.UTC).UTC() }

// TruncateIn returns the start of the bucket of loc containing t, in loc:
// its local hour, midnight, Monday or first of the month. A local hour
// starts at minute 0 of loc's clock, so in a zone off the whole hour
// (Asia/Kolkata) it is not a UTC hour.
func (i Interval) TruncateIn(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	switch i {
	case Hour:
		return t.Add(-time.Duration(t.Minute())*time.Minute - time.Duration(t.Second())*time.Second - time.Duration(t.Nanosecond()))
	case Week:
		d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
		return d.AddDate(0, 0, -(int(d.Weekday())+6)%7)
	case Month:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, loc)
	default:
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
	}
}

// Next returns the start of the UTC bucket after the one starting at t.
func (i Interval) Next(t time.Time) time.Time { return i.NextIn(t, time.UTC).UTC() }

// NextIn returns the start of the bucket of loc after the one starting at
// t: an hour later, or the same wall clock a day, week or month later (so
// a day with a daylight-saving change has 23 or 25 hours).
func (i Interval) NextIn(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	switch i {
	case Hour:
		return t.Add(time.Hour)
	case Week:
		return t.AddDate(0, 0, 7)
	case Month:
		return t.AddDate(0, 1, 0)
	default:
		return t.AddDate(0, 0, 1)
	}
}

// Report is the API's analytics object (the Analytics schema of
// internal/api/openapi.yaml).
type Report struct {
	Object   string    `json:"object"`
	LinkID   string    `json:"link_id"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Interval Interval  `json:"interval"`
	// Timezone is the IANA zone the buckets were cut in.
	Timezone string `json:"timezone"`
	// AsOf is when the last fold began: the report counts every scan
	// recorded before then, and none after (the fold interval sets the
	// lag, docs/scan-pipeline.md).
	AsOf      time.Time  `json:"as_of"`
	Total     int64      `json:"total"`
	Unique    int64      `json:"unique"`
	Bots      int64      `json:"bots"`
	Series    []Bucket   `json:"series"`
	Devices   []KeyCount `json:"devices"`
	OS        []KeyCount `json:"os"`
	Browsers  []KeyCount `json:"browsers"`
	Referrers []KeyCount `json:"referrers"`
	// Countries lists every country (ISO 3166-1 alpha-2, "(unknown)" when
	// it could not be told) and Sources both sources ("qr", "link"): each
	// adds up to Total.
	Countries []KeyCount `json:"countries"`
	Sources   []KeyCount `json:"sources"`
	// Variants lists every destination that served scans ("rule:<n>",
	// "split:<n>", "(default)"), adding up to Total; only links with rules
	// or a split show it (nil: left out, see WithoutVariants).
	Variants *[]KeyCount `json:"variants,omitempty"`
}

// WithoutVariants is the report of a link without rules or a split:
// the API shows variants only for links that have them (docs/targeting.md).
func (r Report) WithoutVariants() Report {
	r.Variants = nil
	return r
}

// Bucket is one point of the series. The first bucket starts at the
// interval boundary (in the report's zone) at or before From; scans before
// From are not counted. Start is that boundary's UTC instant, as every
// timestamp of the API.
type Bucket struct {
	Start  time.Time `json:"start"`
	Scans  int64     `json:"scans"`
	Unique int64     `json:"unique"`
}

// KeyCount is one entry of a breakdown. A scan without a referrer counts
// under the key "(direct)", one of unknown country under "(unknown)".
type KeyCount struct {
	Key   string `json:"key"`
	Scans int64  `json:"scans"`
}

// Reports answers analytics questions from the rollups that the scan
// writer keeps (db/migrations/00012_scan_rollups.sql), never by counting
// raw scans: whole days, hours and quarter-hours are read pre-aggregated,
// and only the partial quarter-hours at the edges of a range that does not
// start or end on a quarter mark (and, for the count of bots, the partial
// hours) are read from raw scans. Every
// report runs under Limits.
//
// It is the analytics read path's one seam: an implementation over another
// store (an OLAP engine fed from the event table) would keep this API.
type Reports struct {
	db      *store.DB
	limits  Limits
	limiter *limiter
	// answered holds reports of ranges that ended before they were
	// computed, with the rollups' version they were computed at: while the
	// version stays, the same question has the same answer (dashboards
	// asking again, many viewers of one link), which costs one row read.
	answered *epochcache.Cache[question, answer]
	// Now is the clock that tells whether a range runs to the present
	// (nil: time.Now).
	Now func() time.Time
}

// NewReports returns Reports over db, bounded by l.
func NewReports(db *store.DB, l Limits) *Reports {
	return &Reports{db: db, limits: l, limiter: newLimiter(l), answered: epochcache.New[question, answer](maxAnswered)}
}

// maxAnswered bounds the reports kept for asking again (the largest, hours
// of 31 days, is about 40 KB): a few MB at most.
const maxAnswered = 64

// question is what a report answers.
type question struct {
	ws, link uuid.UUID
	from, to time.Time // to: the start of the last bucket when open
	interval Interval
	zone     string
	open     bool
}

// answer is a report and the rollups' version it was computed at.
type answer struct {
	version int64
	report  Report
}

// again returns the answer to q if the rollups have not changed since it
// was computed.
func (s *Reports) again(ctx context.Context, q question) (Report, bool, error) {
	a, ok := s.answered.Get(q)
	if !ok {
		return Report{}, false, nil
	}
	version, err := rollup.Version(ctx, s.db.Conn(ctx))
	if err != nil {
		return Report{}, false, err
	}
	if version != a.version {
		return Report{}, false, nil
	}
	return a.report.clone(), true, nil
}

// clone copies the report's slices, so a caller can change its copy.
func (r Report) clone() Report {
	r.Series = slices.Clone(r.Series)
	r.Devices, r.OS, r.Browsers, r.Referrers = slices.Clone(r.Devices), slices.Clone(r.OS), slices.Clone(r.Browsers), slices.Clone(r.Referrers)
	r.Countries, r.Sources = slices.Clone(r.Countries), slices.Clone(r.Sources)
	if r.Variants != nil {
		v := slices.Clone(*r.Variants)
		r.Variants = &v
	}
	return r
}

// Compute builds the report of one link over r. Totals, series and
// breakdowns count human scans; bots are reported apart. The visitor hash is
// keyed per UTC day, so "unique" counts a person once per day: a visitor
// seen on two days of a week counts twice in that week. The counts are
// exact. When the redirect is busy and reports have used their pace
// (Limits.Pace), when the workspace or the process has too many reports
// running, or when the query hits the statement timeout, the error is a
// *BusyError.
func (s *Reports) Compute(ctx context.Context, ws, linkID uuid.UUID, r Range) (Report, error) {
	var rep Report
	_, err := s.Encoded(ctx, ws, linkID, r, func(x Report) ([]byte, error) { rep = x; return nil, nil })
	return rep, err
}

// Encoded is Compute, with the report turned into bytes by encode while the
// report still holds its slot: encoding a long series costs more than
// finding a report asked again, so both count against the limits, and 20
// clients asking back to back cannot take more than the slots' share of
// the CPUs. The bytes are sent after the slot is free, so a slow reader
// holds none.
func (s *Reports) Encoded(ctx context.Context, ws, linkID uuid.UUID, r Range, encode func(Report) ([]byte, error)) ([]byte, error) {
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	if ok, err := s.limits.Pace.Acquire(ctx, paceEstimate, s.limits.Wait); err != nil {
		return nil, err
	} else if !ok {
		return nil, &BusyError{RetryAfter: time.Second, Reason: "short links are being followed at a high rate and analytics yields to them; retry shortly"}
	}
	release, err := s.limiter.acquire(ctx, ws)
	if err != nil {
		return nil, err
	}
	defer release()
	start := time.Now()
	defer func() { s.limits.Pace.Adjust(float64(time.Since(start).Milliseconds()) - paceEstimate) }()
	// A range that ended before now has one answer per rollups' version. So
	// has one that runs to now (the API's default) while its last bucket
	// stays the same: only its to moves, and the rollups hold nothing past
	// the last fold. A range ending at a given instant still ahead is
	// computed every time.
	q := question{ws: ws, link: linkID, from: r.From, to: r.To, interval: r.Interval, zone: r.Zone.Name()}
	reusable := !r.Open && r.To.Before(now)
	if r.Open {
		q.to, q.open, reusable = r.Interval.TruncateIn(now, r.Zone.Location()).UTC(), true, true
	}
	if reusable {
		rep, ok, err := s.again(ctx, q)
		if err != nil {
			return nil, err
		}
		if ok {
			if r.Open {
				rep.To = now.UTC()
			}
			return encode(rep)
		}
	}
	if r.Open && r.To.Before(now) {
		r.To = now.UTC()
	}
	var rep Report
	var version int64
	epoch := s.answered.Epoch()
	err = s.db.ReadOnly(ctx, s.limits.StatementTimeout, func(db store.DBTX) error {
		state, err := rollup.State(ctx, db)
		if err != nil {
			return err
		}
		version = state.Version
		rep, err = compute(ctx, db, state, ws, linkID, r, now)
		return err
	})
	if errors.Is(err, store.ErrStatementTimeout) {
		return nil, &BusyError{RetryAfter: 5 * time.Second, Reason: "the analytics query took too long; retry later"}
	}
	if err != nil {
		return nil, err
	}
	if reusable {
		s.answered.Put(q, answer{version: version, report: rep.clone()}, epoch)
	}
	return encode(rep)
}

// compute builds the report from the rollups as state, read in the same
// snapshot, says they are. Buckets are cut in r.Zone: whole-hour zones at
// UTC hours, others at the quarter marks the hour rows keep (migration
// 00044).
func compute(ctx context.Context, db store.DBTX, state rollup.FoldState, ws, linkID uuid.UUID, r Range, now time.Time) (Report, error) {
	loc := r.Zone.Location()
	from, to := r.From.UTC(), r.To.UTC()
	rep := Report{Object: "analytics", LinkID: id.Format(id.Link, linkID), From: r.From.UTC(), To: r.To.UTC(), Interval: r.Interval, Timezone: r.Zone.Name()}
	// The report counts the folded scans: the rollups hold them, and raw
	// reads of partial hours take only those below the same watermark, so
	// every part agrees as of the last fold (docs/scan-pipeline.md).
	rep.AsOf = state.FoldedAt.UTC()

	// Whole quarter-hours [q0, q1) come from the rollups: whole hours
	// [h0, h1) from their rows, the quarters of the partial hours around
	// them from the counts the rows keep before the quarter marks. Only the
	// partial quarter-hours [from, q0) and [q1, to) are read from raw
	// scans, and, for the count of bots (kept per hour), the partial hours
	// [from, h0) and [h1, to). Of the whole hours, whole days [d0, d1) come
	// from the daily breakdowns.
	q0, q1 := ceilQuarter(from), floorQuarter(to)
	// A range that runs to the present (the default one does) ends inside
	// the hour in progress, whose rollup holds only scans up to now: that
	// hour is read whole from the rollups, never from raw scans.
	if Hour.Truncate(to).Before(to) && !to.Before(now) {
		q1 = Hour.Next(Hour.Truncate(to))
	}
	if !q0.Before(q1) {
		q0, q1 = to, to
	}
	h0, h1 := ceilTo(Hour, q0), Hour.Truncate(q1)
	if !h0.Before(h1) {
		h0, h1 = q1, q1
	}
	d0, d1 := ceilTo(Day, h0), Day.Truncate(h1)
	if !d0.Before(d1) {
		d0, d1 = h1, h1
	}
	// The partial hours' quarters in [q0, q1): only q0's hour and q1's can
	// be partial (one piece when they are the same hour).
	first, last := partial(quartersIn(Hour.Truncate(q0), q0, q1)), partial(quartersIn(Hour.Truncate(q1), q0, q1))
	if last.hour.Equal(first.hour) {
		last = piece{hour: last.hour}
	}

	// The buckets, in the zone: starts[i] is bucket i's first instant,
	// ends[i] the next bucket's (cut at the range's ends for counting).
	rep.Series = []Bucket{}
	var starts, ends []time.Time
	for start := r.Interval.TruncateIn(from, loc); start.Before(to); start = r.Interval.NextIn(start, loc) {
		starts = append(starts, start.UTC())
		ends = append(ends, r.Interval.NextIn(start, loc).UTC())
		rep.Series = append(rep.Series, Bucket{Start: start.UTC()})
	}
	bucketOf := func(t time.Time) int {
		return max(0, sort.Search(len(starts), func(i int) bool { return starts[i].After(t) })-1)
	}

	c := &uniques{ctx: ctx, db: db, ws: ws, link: linkID, rows: map[time.Time]*rollup.Hour{}}
	{
		// From the hour of from: its counters may count the start edge.
		hours, err := rollup.Hours(ctx, db, ws, linkID, Hour.Truncate(from), ceilTo(Hour, maxTime(q1, to)))
		if err != nil {
			return rep, err
		}
		for i := range hours {
			h := &hours[i]
			hour := h.Hour.UTC()
			c.rows[hour] = h
			p := quartersIn(hour, q0, q1)
			if p.lo == 0 && p.hi == 4 {
				rep.Bots += h.Bots
			}
			// Each quarter's scans go to its bucket: a bucket boundary
			// inside the hour (a zone off the whole hour) is at a
			// quarter mark.
			for q := p.lo; q < p.hi; q++ {
				n := h.ScansInQuarters(q, q+1)
				rep.Total += n
				rep.Series[bucketOf(hour.Add(time.Duration(q)*quarterHourLen))].Scans += n
			}
		}
	}

	// Raw scans of the partial quarter-hours [from, q0) and [q1, to): each
	// visitor there is looked up in the seen-set (its quarter-hours of the
	// day) to tell whether the whole quarter-hours counted it already, or
	// the edge is counted from the counters (edgeSide).
	edges := make([][]edgeVisitor, len(starts))
	var allEdges []edgeVisitor
	extra := make([]int64, len(starts)) // visitors of edges counted from the counters
	var extraTotal int64
	sides := [2]edgeSide{
		startEdge(from, q0, q1, bucketOf(from), ends),
		endEdge(q0, q1, to, bucketOf(q1), starts),
	}
	q := rollup.EdgeScansQuery{LinkID: linkID, WorkspaceID: ws, FoldedBelow: state.FoldedBelow}
	q.From1, q.To1, q.Split1, q.ProbeAfter1 = sides[0].read()
	q.From2, q.To2, q.Split2, q.ProbeAfter2 = sides[1].read()
	if q.From1.Before(q.To1) || q.From2.Before(q.To2) {
		rows, err := rollup.Edges(ctx, db, q)
		if err != nil {
			return rep, err
		}
		for _, e := range rows {
			quarter := e.Quarter.UTC()
			v := edgeVisitor{day: Day.Truncate(quarter), hash: string(e.VisitorHash), quarters: [2]uint64{uint64(e.DayAm), uint64(e.DayPm)}}
			side := &sides[e.W-1]
			if !side.inWindow(e.After) {
				side.rest = append(side.rest, v)
				continue
			}
			rep.Total += e.Scans
			rep.Series[side.bucket].Scans += e.Scans
			if side.byCounters {
				side.inside[v.hash] = true
				continue
			}
			edges[side.bucket] = append(edges[side.bucket], v)
			allEdges = append(allEdges, v)
		}
	}
	for i := range sides {
		if s := &sides[i]; s.byCounters {
			n := s.count(c.rows)
			extra[s.bucket] += n
			extraTotal += n
		}
	}
	// Bots of the partial hours [from, h0) and [h1, to), from raw scans:
	// each read whole, or its hour's bots less those of the rest of the
	// hour when that is shorter (botsWindow).
	if from.Before(h0) || h1.Before(to) {
		a1, b1, less1 := botsWindow(from, minTime(h0, to), c.rows)
		a2, b2, less2 := botsWindow(h1, to, c.rows)
		n1, n2, err := rollup.EdgeBots(ctx, db, rollup.EdgeQuery{LinkID: linkID, WorkspaceID: ws, From1: a1, To1: b1, From2: a2, To2: b2, FoldedBelow: state.FoldedBelow})
		if err != nil {
			return rep, err
		}
		rep.Bots += less1.minus(n1) + less2.minus(n2)
	}

	// Unique visitors of a bucket or the range: each visitor-day (the hash
	// is keyed per UTC day) seen in it counts once.
	for i := range starts {
		a, b := maxTime(starts[i], q0), minTime(ends[i], q1)
		if r.Interval == Hour && a.Equal(starts[i]) && b.Equal(ends[i]) && len(edges[i]) == 0 && extra[i] == 0 {
			// A whole local hour: its window's counter.
			row := c.rows[a.Truncate(time.Hour)]
			if row != nil {
				if k := quarterMark(a.Truncate(time.Hour), a); k > 0 {
					rep.Series[i].Unique = row.UniqFrom[k-1]
				} else {
					rep.Series[i].Unique = row.Uniq
				}
			}
			continue
		}
		u, err := c.count(a, b, edges[i])
		if err != nil {
			return rep, err
		}
		rep.Series[i].Unique = u + extra[i]
	}
	u, err := c.count(q0, q1, allEdges)
	if err != nil {
		return rep, err
	}
	rep.Unique = u + extraTotal

	// The partial quarter-hours' keys: each window read raw, or its
	// quarter from the counters less the rest of the quarter, read raw,
	// when that rest is shorter (keysWindow).
	raw1, q3 := keysWindow(from, q0)
	raw2, q4 := keysWindow(q1, to)
	keys, err := rollup.Keys(ctx, db, rollup.KeysQuery{
		MaxKeys: MaxBreakdownKeys, LinkID: linkID, WorkspaceID: ws,
		FromDay: d0, ToDay: d1,
		HourFrom1: h0, HourTo1: d0, HourFrom2: d1, HourTo2: h1,
		PieceHour1: first.hour, PieceLo1: first.lo, PieceHi1: first.hi,
		PieceHour2: last.hour, PieceLo2: last.lo, PieceHi2: last.hi,
		PieceHour3: q3.hour, PieceLo3: q3.lo, PieceHi3: q3.hi,
		PieceHour4: q4.hour, PieceLo4: q4.lo, PieceHi4: q4.hi,
		Sign1: raw1.sign, From1: raw1.from, To1: raw1.to,
		Sign2: raw2.sign, From2: raw2.from, To2: raw2.to,
		FoldedBelow: state.FoldedBelow,
	})
	if err != nil {
		return rep, err
	}
	rep.Devices, rep.OS, rep.Browsers, rep.Referrers = []KeyCount{}, []KeyCount{}, []KeyCount{}, []KeyCount{}
	rep.Countries, rep.Sources = []KeyCount{}, []KeyCount{}
	variants := []KeyCount{}
	rep.Variants = &variants
	for _, k := range keys {
		kc := KeyCount{Key: k.Key, Scans: k.Scans}
		switch k.Dim {
		case "d":
			rep.Devices = append(rep.Devices, kc)
		case "o":
			rep.OS = append(rep.OS, kc)
		case "b":
			rep.Browsers = append(rep.Browsers, kc)
		case "r":
			rep.Referrers = append(rep.Referrers, kc)
		case "c":
			rep.Countries = append(rep.Countries, kc)
		case "s":
			rep.Sources = append(rep.Sources, kc)
		case "v":
			variants = append(variants, kc)
		}
	}
	return rep, nil
}

// quarterMark is how many quarter-hours after hour the instant t lies
// when it lies inside that hour (1-3), else 0.
func quarterMark(hour, t time.Time) int {
	d := t.Sub(hour)
	if d <= 0 || d >= time.Hour {
		return 0
	}
	return int(d / quarterHourLen)
}

// quarterHourLen is the step of the counts the rollups keep before the
// quarter marks of each UTC hour.
const quarterHourLen = 15 * time.Minute

// floorQuarter and ceilQuarter return the UTC quarter mark at or before
// and at or after t.
func floorQuarter(t time.Time) time.Time { return t.UTC().Truncate(quarterHourLen) }

func ceilQuarter(t time.Time) time.Time {
	if q := floorQuarter(t); q.Before(t) {
		return q.Add(quarterHourLen)
	}
	return t.UTC()
}

// piece is the quarters [lo, hi) of one UTC hour (0 <= lo <= hi <= 4).
type piece struct {
	hour   time.Time
	lo, hi int32
}

// quartersIn returns the quarters of hour inside [a, b) (quarter-aligned).
func quartersIn(hour, a, b time.Time) piece {
	q := func(t time.Time) int32 {
		return int32(min(4, max(0, t.Sub(hour)/quarterHourLen)))
	}
	return piece{hour: hour, lo: q(a), hi: q(b)}
}

// partial returns p when it is part of its hour, else an empty piece
// (none, or the whole hour, which the hourly rows count).
func partial(p piece) piece {
	if p.lo < p.hi && (p.lo > 0 || p.hi < 4) {
		return p
	}
	return piece{hour: p.hour}
}

// edgeSide is one end of a range between quarter marks: its window (the
// start edge [from, q0), the end edge [q1, to)) inside one quarter-hour,
// and the bucket it counts in.
//
// Its visitors are usually looked up in the seen-set, one index probe
// each. When the whole quarter-hours run from the start edge to the end of
// its UTC day, in its bucket and in the range, the edge's visitors are
// those whose last scan of the day lies in the window: the hour row counts
// those last seen in the window's quarter-hour (LastIn), and only the
// visitors of the rest of that quarter (before the window) need looking
// up, to take away those last seen there. Likewise the end edge with the
// visitors first seen (FirstIn) when the whole quarter-hours run from the
// start of its day. That is done when the rest of the quarter is shorter
// than the window: fewer probes.
type edgeSide struct {
	window     [2]time.Time
	quarter    [2]time.Time // the window's quarter-hour
	bucket     int
	end        bool
	byCounters bool
	inside     map[string]bool // byCounters: the window's visitors
	rest       []edgeVisitor   // byCounters: the rest's visitors, with their quarters
}

func startEdge(from, q0, q1 time.Time, bucket int, ends []time.Time) edgeSide {
	quarter := floorQuarter(from)
	s := edgeSide{window: [2]time.Time{from, q0}, quarter: [2]time.Time{quarter, quarter.Add(quarterHourLen)}, bucket: bucket, inside: map[string]bool{}}
	s.byCounters = from.Before(q0) && q0.Equal(s.quarter[1]) && from.Sub(quarter) < q0.Sub(from) &&
		!minTime(ends[bucket], q1).Before(Day.Next(Day.Truncate(from)))
	return s
}

func endEdge(q0, q1, to time.Time, bucket int, starts []time.Time) edgeSide {
	quarter := floorQuarter(to)
	s := edgeSide{window: [2]time.Time{q1, to}, quarter: [2]time.Time{quarter, quarter.Add(quarterHourLen)}, bucket: bucket, end: true, inside: map[string]bool{}}
	s.byCounters = q1.Before(to) && q1.Equal(quarter) && s.quarter[1].Sub(to) < to.Sub(q1) &&
		!maxTime(starts[bucket], q0).After(Day.Truncate(q1))
	return s
}

// read returns what to read of the side: its window, or its whole quarter
// when it is counted from the counters; split at the window's start (the
// start edge) or end (the end edge); and which side of the split to look
// up, the window's or the rest's.
func (s *edgeSide) read() (from, to, split time.Time, probeAfter bool) {
	from, to = s.window[0], s.window[1]
	if s.byCounters {
		from, to = s.quarter[0], s.quarter[1]
	}
	if s.end {
		return from, to, s.window[1], s.byCounters
	}
	return from, to, s.window[0], !s.byCounters
}

// inWindow tells whether scans on the after side of the split are the
// window's (else the rest's).
func (s *edgeSide) inWindow(after bool) bool { return after != s.end }

// count returns the visitor-days of a byCounters edge's window that the
// whole quarter-hours do not count: the start edge's visitors last seen
// that day in the window, the end edge's first seen in it.
func (s *edgeSide) count(rows map[time.Time]*rollup.Hour) int64 {
	quarter := floorQuarter(s.window[0])
	day := Day.Truncate(quarter)
	q := int(quarter.Sub(day) / quarterHourLen)
	var n int64
	if row := rows[Hour.Truncate(quarter)]; row != nil {
		if s.end {
			n = row.FirstIn(q % 4)
		} else {
			n = row.LastIn(q % 4)
		}
	}
	seen := map[string]bool{}
	for _, v := range s.rest {
		if s.inside[v.hash] || seen[v.hash] {
			continue
		}
		seen[v.hash] = true
		// Last (first) seen in the rest: no scan later (earlier) that day.
		lo, hi := q+1, 96
		if s.end {
			lo, hi = 0, q
		}
		if !v.seenIn(lo, hi) {
			n--
		}
	}
	return n
}

// rawWindow is a window of raw scans whose keys are added (sign 1) or
// taken away (-1).
type rawWindow struct {
	from, to time.Time
	sign     int32
}

// keysWindow returns how to count the keys of [a, b), a part of one
// quarter-hour that reaches one of its ends: the window read raw, or,
// when the rest of the quarter is shorter, the quarter from the counters
// (a piece) and the rest read raw and taken away.
func keysWindow(a, b time.Time) (rawWindow, piece) {
	qs := floorQuarter(a)
	hour := Hour.Truncate(qs)
	from, to, taken := shorterSide(a, b, qs, qs.Add(quarterHourLen))
	if !taken {
		return rawWindow{a, b, 1}, piece{hour: hour}
	}
	q := int32(qs.Sub(hour) / quarterHourLen)
	return rawWindow{from, to, -1}, piece{hour: hour, lo: q, hi: q + 1}
}

// shorterSide returns what to read raw of [a, b), a part of the span
// [start, end) that reaches one of its ends: [a, b) itself, or, when the
// rest of the span is shorter, that rest (taken: the part is then the
// span's count less the rest's).
func shorterSide(a, b, start, end time.Time) (from, to time.Time, taken bool) {
	switch {
	case !a.Before(b) || b.After(end):
	case a.After(start) && b.Equal(end) && a.Sub(start) < b.Sub(a):
		return start, a, true
	case a.Equal(start) && b.Before(end) && end.Sub(b) < b.Sub(a):
		return b, end, true
	}
	return a, b, false
}

// botsWindow returns what to read for the bots of [a, b), a part of one
// hour: [a, b) itself (and no hour), or, when the rest of the hour is
// shorter, that rest and the hour whose bots it is taken from. The hour
// row and the raw scans count the same folded scans (one snapshot, one
// watermark).
func botsWindow(a, b time.Time, rows map[time.Time]*rollup.Hour) (time.Time, time.Time, botsLess) {
	hour := Hour.Truncate(a)
	if row := rows[hour]; row != nil {
		if from, to, taken := shorterSide(a, b, hour, hour.Add(time.Hour)); taken {
			return from, to, botsLess{row}
		}
	}
	return a, b, botsLess{}
}

// botsLess is the hour whose bots a count of raw bots is taken from, if
// any.
type botsLess struct{ hour *rollup.Hour }

// minus returns the bots of the window botsWindow read n for.
func (l botsLess) minus(n int64) int64 {
	if l.hour == nil {
		return n
	}
	return l.hour.Bots - n
}

// edgeVisitor is a human visitor of a range's raw edge: its UTC day, hash
// and quarter-hours of that day.
type edgeVisitor struct {
	day      time.Time
	hash     string
	quarters [2]uint64
}

// uniques counts distinct visitor-days from the hour rows of [q0, q1) and
// the seen-set.
type uniques struct {
	ctx  context.Context
	db   store.DBTX
	ws   uuid.UUID
	link uuid.UUID
	rows map[time.Time]*rollup.Hour
}

// count returns the visitor-days seen in the whole hours' part [a, b)
// (quarter-aligned, inside [h0, h1)) or among edges. Per UTC day: a part
// that starts the day counts the visitors first seen before its end, one
// that ends the day those last seen at or after its start (both from the
// counters), one inside the day asks the seen-set; an edge visitor counts
// when its quarters show no scan in that part.
func (c *uniques) count(a, b time.Time, edges []edgeVisitor) (int64, error) {
	var total int64
	parts := map[time.Time][2]int{} // UTC day → its quarters [qa, qb) in [a, b)
	for day := Day.Truncate(a); a.Before(b) && day.Before(b); day = Day.Next(day) {
		qa := max(0, int(a.Sub(day)/(15*time.Minute)))
		qb := min(96, int(b.Sub(day)/(15*time.Minute)))
		if qa >= qb {
			continue
		}
		parts[day] = [2]int{qa, qb}
		var u int64
		switch {
		case qa == 0:
			for h := 0; h < qb/4; h++ {
				if row := c.rows[day.Add(time.Duration(h)*time.Hour)]; row != nil {
					u += row.DayFirst
				}
			}
			if qb%4 != 0 {
				if row := c.rows[day.Add(time.Duration(qb/4)*time.Hour)]; row != nil {
					u += row.FirstBefore[qb%4-1]
				}
			}
		case qb == 96:
			for h := qa/4 + 1; h < 24; h++ {
				if row := c.rows[day.Add(time.Duration(h)*time.Hour)]; row != nil {
					u += row.DayLast
				}
			}
			if row := c.rows[day.Add(time.Duration(qa/4)*time.Hour)]; row != nil {
				if qa%4 == 0 {
					u += row.DayLast
				} else {
					u += row.LastFrom[qa%4-1]
				}
			}
		default:
			var mask [2]uint64
			for q := qa; q < qb; q++ {
				mask[q/48] |= 1 << (q % 48)
			}
			n, err := rollup.VisitorsInQuarters(c.ctx, c.db, c.ws, c.link, day, int64(mask[0]), int64(mask[1]))
			if err != nil {
				return 0, err
			}
			u = n
		}
		total += u
	}
	seen := map[edgeVisitor]bool{}
	for _, e := range edges {
		key := edgeVisitor{day: e.day, hash: e.hash}
		if seen[key] {
			continue
		}
		seen[key] = true
		if p, ok := parts[e.day]; !ok || !e.seenIn(p[0], p[1]) {
			total++
		}
	}
	return total, nil
}

// seenIn tells whether the visitor has a scan in the quarters [lo, hi) of
// its day.
func (e edgeVisitor) seenIn(lo, hi int) bool {
	for q := lo; q < hi; q++ {
		if e.quarters[q/48]>>(q%48)&1 != 0 {
			return true
		}
	}
	return false
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// ceilTo returns the start of the first bucket of i at or after t.
func ceilTo(i Interval, t time.Time) time.Time {
	if s := i.Truncate(t); s.Before(t) {
		return i.Next(s)
	}
	return t.UTC()
}
