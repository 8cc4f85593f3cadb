package analytics

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/store/dbsqlc"
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

// DefaultRange is the window when from is not given.
const DefaultRange = 30 * 24 * time.Hour

// MaxBreakdownKeys bounds each breakdown list; keys beyond the top ones by
// scans are left out.
const MaxBreakdownKeys = 50

// Range is a validated analytics request: [From, To) in buckets of Interval.
type Range struct {
	From, To time.Time
	Interval Interval
}

// ParseRange reads from, to and interval (defaults: the 30 days up to now,
// by day) and rejects anything else, with pointers like /query/from.
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
	r.From = r.To.Add(-DefaultRange)
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

// Report is the analytics object of CONTRACT.md section 6.4.
type Report struct {
	Object    string     `json:"object"`
	LinkID    string     `json:"link_id"`
	From      time.Time  `json:"from"`
	To        time.Time  `json:"to"`
	Interval  Interval   `json:"interval"`
	Total     int64      `json:"total"`
	Unique    int64      `json:"unique"`
	Bots      int64      `json:"bots"`
	Series    []Bucket   `json:"series"`
	Devices   []KeyCount `json:"devices"`
	OS        []KeyCount `json:"os"`
	Browsers  []KeyCount `json:"browsers"`
	Referrers []KeyCount `json:"referrers"`
}

// Bucket is one point of the series. The first bucket starts at the
// interval boundary at or before From; scans before From are not counted.
type Bucket struct {
	Start  time.Time `json:"start"`
	Scans  int64     `json:"scans"`
	Unique int64     `json:"unique"`
}

// KeyCount is one entry of a breakdown. A scan without a referrer counts
// under the key "(direct)".
type KeyCount struct {
	Key   string `json:"key"`
	Scans int64  `json:"scans"`
}

// Reports answers analytics questions from the database.
type Reports struct{ db *store.DB }

// NewReports returns Reports over db.
func NewReports(db *store.DB) *Reports { return &Reports{db: db} }

// Compute builds the report of one link over r. Totals, series and
// breakdowns count human scans; bots are reported apart. The visitor hash is
// keyed per UTC day, so "unique" counts a person once per day: a visitor
// seen on two days of a week counts twice in that week.
func (s *Reports) Compute(ctx context.Context, ws, linkID uuid.UUID, r Range) (Report, error) {
	pool := s.db.Conn(ctx)
	q := dbsqlc.New()
	rep := Report{Object: "analytics", LinkID: store.FormatID(store.PrefixLink, linkID), From: r.From, To: r.To, Interval: r.Interval}
	totals, err := q.AnalyticsTotals(ctx, pool, dbsqlc.AnalyticsTotalsParams{LinkID: linkID, WorkspaceID: ws, FromTime: r.From, ToTime: r.To})
	if err != nil {
		return rep, store.InterpretError(err)
	}
	rep.Total, rep.Unique, rep.Bots = totals.Total, totals.Uniq, totals.Bots

	rows, err := q.AnalyticsSeries(ctx, pool, dbsqlc.AnalyticsSeriesParams{Unit: string(r.Interval), LinkID: linkID, WorkspaceID: ws, FromTime: r.From, ToTime: r.To})
	if err != nil {
		return rep, store.InterpretError(err)
	}
	byStart := make(map[time.Time]dbsqlc.AnalyticsSeriesRow, len(rows))
	for _, row := range rows {
		byStart[row.Bucket.UTC()] = row
	}
	rep.Series = []Bucket{}
	for start := r.Interval.Truncate(r.From); start.Before(r.To); start = r.Interval.Next(start) {
		row := byStart[start]
		rep.Series = append(rep.Series, Bucket{Start: start, Scans: row.Scans, Unique: row.Uniq})
	}

	p := dbsqlc.AnalyticsByDeviceParams{LinkID: linkID, WorkspaceID: ws, FromTime: r.From, ToTime: r.To, MaxKeys: MaxBreakdownKeys}
	if rep.Devices, err = breakdown(q.AnalyticsByDevice(ctx, pool, p)); err != nil {
		return rep, err
	}
	if rep.OS, err = breakdown(q.AnalyticsByOS(ctx, pool, dbsqlc.AnalyticsByOSParams(p))); err != nil {
		return rep, err
	}
	if rep.Browsers, err = breakdown(q.AnalyticsByBrowser(ctx, pool, dbsqlc.AnalyticsByBrowserParams(p))); err != nil {
		return rep, err
	}
	rep.Referrers, err = breakdown(q.AnalyticsByReferrer(ctx, pool, dbsqlc.AnalyticsByReferrerParams(p)))
	return rep, err
}

// breakdown converts any of the four breakdown queries' rows.
func breakdown[R ~struct {
	Key   string
	Scans int64
}](rows []R, err error) ([]KeyCount, error) {
	if err != nil {
		return nil, store.InterpretError(err)
	}
	out := make([]KeyCount, len(rows))
	for i, r := range rows {
		out[i] = KeyCount(r)
	}
	return out, nil
}
