package analytics

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/epochcache"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/scan/rollup"
	"github.com/linkqr/linkqr/internal/store"
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

// Range is a validated analytics request: [From, To) in buckets of Interval.
type Range struct {
	From, To time.Time
	Interval Interval
	// Open means to was not given: the range runs to the present, taken
	// when the report is computed (To is then that instant).
	Open bool
}

// ParseRange reads from, to and interval (defaults: the 30 days up to now,
// from the start of their first hour, by day) and rejects anything else, with pointers like /query/from.
func ParseRange(q url.Values, now time.Time) (Range, error) {
	var errs validate.Errors
	for name, vs := range q {
		switch {
		case name != "from" && name != "to" && name != "interval":
			errs.Add("/query/"+name, "is not a known parameter")
		case len(vs) > 1:
			errs.Add("/query/"+name, validate.DetailRepeated)
		}
	}
	r := Range{To: now.UTC(), Interval: Day}
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
func (i Interval) Truncate(t time.Time) time.Time {
	t = t.UTC()
	switch i {
	case Hour:
		return t.Truncate(time.Hour)
	case Week:
		d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		return d.AddDate(0, 0, -(int(d.Weekday())+6)%7)
	case Month:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	default:
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	}
}

// Next returns the start of the bucket after the one starting at t.
func (i Interval) Next(t time.Time) time.Time {
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
// interval boundary at or before From; scans before From are not counted.
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
// raw scans: whole days and hours are read pre-aggregated, and only the
// partial hours at the edges of a range that does not start or end on the
// hour are read from raw scans (at most two hours of one link). Every
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
	q := question{ws: ws, link: linkID, from: r.From, to: r.To, interval: r.Interval}
	reusable := !r.Open && r.To.Before(now)
	if r.Open {
		q.to, q.open, reusable = r.Interval.Truncate(now), true, true
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

// dayCounters are a day's per-hour first-seen and last-seen visitor counts.
type dayCounters struct {
	first, last int64
}

// compute builds the report from the rollups as state, read in the same
// snapshot, says they are.
func compute(ctx context.Context, db store.DBTX, state rollup.FoldState, ws, linkID uuid.UUID, r Range, now time.Time) (Report, error) {
	from, to := r.From.UTC(), r.To.UTC()
	rep := Report{Object: "analytics", LinkID: id.Format(id.Link, linkID), From: r.From, To: r.To, Interval: r.Interval}
	// The report counts the folded scans: the rollups hold them, and raw
	// reads of partial hours take only those below the same watermark, so
	// every part agrees as of the last fold (docs/scan-pipeline.md).
	rep.AsOf = state.FoldedAt.UTC()

	// Whole hours [h0, h1) come from the rollups, [from, h0) and [h1, to)
	// from raw scans; of the whole hours, whole days [d0, d1) come from the
	// daily breakdowns.
	h0, h1 := ceilTo(Hour, from), Hour.Truncate(to)
	// A range that runs to the present (the default one does) ends inside
	// the hour in progress, whose rollup holds only scans up to now: that
	// hour is read whole from the rollups, never from raw scans.
	if h1.Before(to) && !to.Before(now) {
		h1 = Hour.Next(h1)
	}
	if !h0.Before(h1) {
		h0, h1 = to, to
	}
	d0, d1 := ceilTo(Day, h0), Day.Truncate(h1)
	if !d0.Before(d1) {
		d0, d1 = h1, h1
	}

	rep.Series = []Bucket{}
	bucket := map[time.Time]int{}
	for start := r.Interval.Truncate(from); start.Before(to); start = r.Interval.Next(start) {
		bucket[start] = len(rep.Series)
		rep.Series = append(rep.Series, Bucket{Start: start})
	}
	at := func(t time.Time) *Bucket { return &rep.Series[bucket[r.Interval.Truncate(t)]] }

	days := map[time.Time]*[24]dayCounters{}
	dayOf := func(t time.Time) *[24]dayCounters {
		d := Day.Truncate(t)
		c := days[d]
		if c == nil {
			c = new([24]dayCounters)
			days[d] = c
		}
		return c
	}
	if h0.Before(h1) {
		hours, err := rollup.Hours(ctx, db, ws, linkID, h0, h1)
		if err != nil {
			return rep, err
		}
		for _, h := range hours {
			hour := h.Hour.UTC()
			rep.Total += h.Scans
			rep.Bots += h.Bots
			b := at(hour)
			b.Scans += h.Scans
			if r.Interval == Hour {
				b.Unique += h.Uniq
			}
			c := &dayOf(hour)[hour.Hour()]
			c.first += h.DayFirst
			c.last += h.DayLast
		}
	}

	// Raw scans of the partial edge hours: human visitors per day, with
	// their hour bits of that day.
	edgeVisitors := map[time.Time]map[string]int32{}
	if from.Before(h0) || h1.Before(to) {
		edges, err := rollup.Edges(ctx, db, rollup.EdgeQuery{LinkID: linkID, WorkspaceID: ws, From1: from, To1: h0, From2: h1, To2: to, FoldedBelow: state.FoldedBelow})
		if err != nil {
			return rep, err
		}
		for _, e := range edges {
			hour := e.Hour.UTC()
			if e.Bot {
				rep.Bots += e.Scans
				continue
			}
			rep.Total += e.Scans
			b := at(hour)
			b.Scans += e.Scans
			if r.Interval == Hour {
				b.Unique++ // one row per hour and visitor
			}
			day := Day.Truncate(hour)
			dayOf(day)
			if edgeVisitors[day] == nil {
				edgeVisitors[day] = map[string]int32{}
			}
			edgeVisitors[day][string(e.VisitorHash)] = e.DayHours
		}
	}

	// Unique visitors: the sum over the range's UTC days of each day's
	// distinct visitors within the range.
	for day, counters := range days {
		a := min(24, max(0, int(h0.Sub(day)/time.Hour)))
		b := min(24, max(0, int(h1.Sub(day)/time.Hour)))
		var mask int32
		if a < b {
			mask = int32((1<<b - 1) &^ (1<<a - 1))
		}
		var u int64
		switch {
		case mask == 0:
		case a == 0: // the day's first hours: visitors first seen before b
			for _, c := range counters {
				u += c.first
			}
		case b == 24: // the day's last hours: visitors last seen at or after a
			for _, c := range counters {
				u += c.last
			}
		default: // a range inside one day
			n, err := rollup.VisitorsInHours(ctx, db, ws, linkID, day, mask)
			if err != nil {
				return rep, err
			}
			u = n
		}
		for _, hours := range edgeVisitors[day] {
			if hours&mask == 0 { // not already counted in the whole hours
				u++
			}
		}
		rep.Unique += u
		if r.Interval != Hour {
			at(day).Unique += u
		}
	}

	keys, err := rollup.Keys(ctx, db, rollup.KeysQuery{
		MaxKeys: MaxBreakdownKeys, LinkID: linkID, WorkspaceID: ws,
		FromDay: d0, ToDay: d1,
		HourFrom1: h0, HourTo1: d0, HourFrom2: d1, HourTo2: h1,
		From1: from, To1: h0, From2: h1, To2: to, FoldedBelow: state.FoldedBelow,
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

// ceilTo returns the start of the first bucket of i at or after t.
func ceilTo(i Interval, t time.Time) time.Time {
	if s := i.Truncate(t); s.Before(t) {
		return i.Next(s)
	}
	return t.UTC()
}
