package analytics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/geo"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/tz"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// The reference: analytics computed by counting raw scans, the queries the
// service ran before rollups (and which took 25 s on 10 million scans),
// over the scans the folds have passed (folded), as reports count them.
const (
	folded    = `(xid IS NULL OR xid < (SELECT folded_below FROM scan_fold_state))`
	refTotals = `SELECT count(*) FILTER (WHERE NOT bot), count(DISTINCT visitor_hash) FILTER (WHERE NOT bot), count(*) FILTER (WHERE bot)
FROM scans WHERE link_id = $1 AND workspace_id = $2 AND occurred_at >= $3 AND occurred_at < $4 AND ` + folded
	// Buckets cut by PostgreSQL in the zone: date_trunc in the zone for
	// days, weeks and months, hours binned from a local midnight ($6).
	refSeries = `SELECT CASE WHEN $5::text = 'hour' THEN date_bin('1 hour', occurred_at, $6::timestamptz) ELSE date_trunc($5::text, occurred_at, $7::text) END,
       count(*), count(DISTINCT visitor_hash)
FROM scans WHERE link_id = $1 AND workspace_id = $2 AND occurred_at >= $3 AND occurred_at < $4 AND NOT bot AND ` + folded + ` GROUP BY 1`
	refBreakdown = `SELECT %s AS key, count(*) FROM scans
WHERE link_id = $1 AND workspace_id = $2 AND occurred_at >= $3 AND occurred_at < $4 AND NOT bot AND ` + folded + `
GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT %d`
)

func reference(t *testing.T, pool *pgxpool.Pool, ws, link uuid.UUID, r analytics.Range) analytics.Report {
	t.Helper()
	ctx := context.Background()
	loc := r.Zone.Location()
	rep := analytics.Report{Object: "analytics", LinkID: id.Format(id.Link, link), From: r.From.UTC(), To: r.To.UTC(), Interval: r.Interval, Timezone: r.Zone.Name()}
	args := []any{link, ws, r.From, r.To}
	if err := pool.QueryRow(ctx, refTotals, args...).Scan(&rep.Total, &rep.Unique, &rep.Bots); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, refSeries, append(args, string(r.Interval), time.Date(2000, 1, 1, 0, 0, 0, 0, loc), r.Zone.Name())...)
	if err != nil {
		t.Fatal(err)
	}
	byStart := map[time.Time]analytics.Bucket{}
	for rows.Next() {
		var b analytics.Bucket
		if err := rows.Scan(&b.Start, &b.Scans, &b.Unique); err != nil {
			t.Fatal(err)
		}
		byStart[b.Start.UTC()] = b
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	rep.Series = []analytics.Bucket{}
	for start := r.Interval.TruncateIn(r.From, loc); start.Before(r.To); start = r.Interval.NextIn(start, loc) {
		b, ok := byStart[start.UTC()]
		delete(byStart, start.UTC())
		if ok && r.Interval == analytics.Day && !isMidnight(start, loc) {
			t.Errorf("day bucket %s does not start at midnight in %s", start, r.Zone)
		}
		rep.Series = append(rep.Series, analytics.Bucket{Start: start.UTC(), Scans: b.Scans, Unique: b.Unique})
	}
	for start := range byStart {
		t.Errorf("PostgreSQL cut a %s bucket at %s in %s, not among the report's", r.Interval, start, r.Zone)
	}
	var variantCounts []analytics.KeyCount
	rep.Variants = &variantCounts
	for _, d := range []struct {
		expr  string
		into  *[]analytics.KeyCount
		limit int
	}{
		{"device", &rep.Devices, 50}, {"os", &rep.OS, 50}, {"browser", &rep.Browsers, 50},
		{"COALESCE(referrer_host, '(direct)')::text", &rep.Referrers, 50},
		{"COALESCE(country, '(unknown)')::text", &rep.Countries, 1000}, // every country
		{"source", &rep.Sources, 50},
		{"COALESCE(variant, '(default)')::text", &variantCounts, 1000}, // every variant
	} {
		*d.into = keyCounts(t, pool, fmt.Sprintf(refBreakdown, d.expr, d.limit), args...)
	}
	return rep
}

// keyCounts runs a reference query whose rows are a key and its scans.
func keyCounts(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) []analytics.KeyCount {
	t.Helper()
	rows, err := pool.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := pgx.CollectRows(rows, pgx.RowToStructByPos[analytics.KeyCount])
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// isMidnight tells whether t is 00:00 on loc's clock.
func isMidnight(t time.Time, loc *time.Location) bool {
	l := t.In(loc)
	return l.Hour() == 0 && l.Minute() == 0 && l.Second() == 0 && l.Nanosecond() == 0
}

// zones are the ones the property runs in: UTC, a whole-hour zone with
// daylight saving, and two off the whole hour (+5:30, +5:45).
var zones = []tz.Zone{tz.UTC, tz.MustParse("America/New_York"), tz.MustParse("Asia/Kolkata"), tz.MustParse("Asia/Kathmandu")}

// variants are the destinations that served the scans ("": the link's
// target_url).
var variants = []string{"", "", "rule:0", "rule:1", "split:0", "split:1"}

var userAgents = []string{
	"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
	"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36",
	"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
	"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
	"curl/8.5.0",
}

var referers = []string{"", "", "https://news.example/a", "https://social.example/p/1", "https://mail.example/", "https://b.example/x"}

// countries are the visitors' countries: 60 of them, more than the 50
// entries the other breakdowns stop at, and unknown.
var countries = func() []geo.Country {
	cs := []geo.Country{geo.Unknown}
	for i := range 60 {
		c, _ := geo.ParseCountry(string([]byte{'A' + byte(i/26), 'A' + byte(i%26)}))
		cs = append(cs, c)
	}
	return cs
}()

// recordRandomScans feeds n random hits through the real scan recorder:
// instants spread over [start, start+span) in random order (so batches
// arrive out of time order), a small population of visitors who come back
// within and across days, bots among them.
//
// With fold, the scans are then folded into the rollups; without, they
// stay queued, and reports read them raw.
// seededRand is a random source seeded from the clock; the seed is
// logged, so a failure can be replayed.
func seededRand(t *testing.T, stream uint64) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, stream))
}

// workspaceLinks makes n links in the workspace ws, as recordRandomScans
// takes them: each with its workspace.
func workspaceLinks(t *testing.T, pool *pgxpool.Pool, ws uuid.UUID, n int) [][2]uuid.UUID {
	t.Helper()
	links := make([][2]uuid.UUID, n)
	for i := range links {
		links[i] = [2]uuid.UUID{ws, testkit.Link(t, pool, &testkit.LinkOpts{WorkspaceID: ws})}
	}
	return links
}

func recordRandomScans(t *testing.T, rnd *rand.Rand, db *store.DB, links [][2]uuid.UUID, start time.Time, span time.Duration, n int, fold bool) scan.Folded {
	t.Helper()
	hasher, err := analytics.NewVisitorHasher([]byte("0123456789abcdef0123456789abcdef-rollup-test"))
	if err != nil {
		t.Fatal(err)
	}
	rec := scan.NewRecorder(scan.Options{DB: db, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Hasher: hasher})
	go rec.Run()
	for range n {
		l := links[rnd.IntN(len(links))]
		// Cluster some scans around midnight and the hour so that day and
		// hour edges see both sides.
		at := start.Add(time.Duration(rnd.Int64N(int64(span))))
		switch rnd.IntN(6) {
		case 0:
			at = at.Truncate(24 * time.Hour).Add(time.Duration(rnd.Int64N(int64(2*time.Hour))) - time.Hour)
		case 1: // around a local midnight of a zone off the whole hour
			z := zones[2+rnd.IntN(2)].Location()
			at = analytics.Day.TruncateIn(at, z).Add(time.Duration(rnd.Int64N(int64(2*time.Hour))) - time.Hour)
		}
		visitor := rnd.IntN(25)
		hit := scan.Hit{
			LinkID: l[1], WorkspaceID: l[0], At: at,
			UserAgent: userAgents[visitor%len(userAgents)],
			Referer:   referers[rnd.IntN(len(referers))],
			ClientIP:  netip.AddrFrom4([4]byte{192, 0, 2, byte(visitor)}),
			Country:   countries[rnd.IntN(len(countries))],
			QR:        rnd.IntN(3) == 0,
			Variant:   variants[rnd.IntN(len(variants))],
		}
		if err := rec.Record(context.Background(), hit); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !fold {
		return scan.Folded{}
	}
	// The writer only appends the scans; the fold adds them to the rollups.
	f, err := scan.Fold(ctx, db)
	if err != nil || f.Rows == 0 || f.AsOf.IsZero() {
		t.Fatalf("fold: %+v, %v", f, err)
	}
	return f
}

// randomRange returns a range inside [start-1d, start+span+1d): instants on
// the hour, on the day, or anywhere, and an interval whose limit allows it.
func randomRange(rnd *rand.Rand, start time.Time, span time.Duration) analytics.Range {
	instant := func() time.Time {
		t := start.Add(time.Duration(rnd.Int64N(int64(span+48*time.Hour))) - 24*time.Hour)
		switch rnd.IntN(6) {
		case 0:
			return t.Truncate(time.Hour)
		case 1:
			return t.Truncate(24 * time.Hour)
		case 2:
			return t.Truncate(15 * time.Minute)
		case 3: // a local midnight
			return analytics.Day.TruncateIn(t, zones[rnd.IntN(len(zones))].Location())
		}
		return t
	}
	for {
		a, b := instant(), instant()
		switch rnd.IntN(4) {
		case 0: // inside one day
			b = a.Add(time.Duration(rnd.Int64N(int64(20 * time.Hour))))
		case 1: // inside one hour
			b = a.Add(time.Duration(rnd.Int64N(int64(time.Hour))))
		}
		if b.Before(a) {
			a, b = b, a
		}
		if !a.Before(b) {
			continue
		}
		intervals := []analytics.Interval{analytics.Day, analytics.Week, analytics.Month}
		if b.Sub(a) <= 31*24*time.Hour {
			intervals = append(intervals, analytics.Hour)
		}
		return analytics.Range{From: a, To: b, Interval: intervals[rnd.IntN(len(intervals))], Zone: zones[rnd.IntN(len(zones))]}
	}
}

// TestRollupsAnswerLikeRawScans is the property: whatever the range and
// interval, the report built from rollups equals the report computed from
// raw scans by the old queries.
func TestRollupsAnswerLikeRawScans(t *testing.T) {
	t.Parallel()
	rnd := seededRand(t, 7)
	pool := testkit.DB(t)
	db := store.NewDB(pool)
	ws1, ws2 := testkit.NewTenant(t, pool).WorkspaceID, testkit.NewTenant(t, pool).WorkspaceID
	links := append(workspaceLinks(t, pool, ws1, 2), workspaceLinks(t, pool, ws2, 1)...)
	// 2026-01-24 (a Saturday) to 2026-02-10: weeks, a month and many days.
	start, span := time.Date(2026, 1, 24, 0, 0, 0, 0, time.UTC), 17*24*time.Hour
	// Half the scans folded into the rollups, half not yet: reports count
	// exactly the folded half, as of the fold (then everything once the
	// rest is folded).
	asOf := recordRandomScans(t, rnd, db, links, start, span, 2000, true).AsOf
	recordRandomScans(t, rnd, db, links, start, span, 2000, false)

	reports := analytics.NewReports(db, analytics.DefaultLimits())
	ctx := context.Background()
	check := func(name string, l [2]uuid.UUID, r analytics.Range) {
		t.Helper()
		got, err := reports.Compute(ctx, l[0], l[1], r)
		if err != nil {
			t.Fatalf("%s %+v: %v", name, r, err)
		}
		want := reference(t, pool, l[0], l[1], r)
		want.AsOf = asOf
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: link %s %s..%s by %s:\n got  %+v\n want %+v", name, l[1], r.From.Format(time.RFC3339Nano), r.To.Format(time.RFC3339Nano), r.Interval, got, want)
		}
		if c, s, v := sum(got.Countries), sum(got.Sources), sum(*got.Variants); c != got.Total || s != got.Total || v != got.Total {
			t.Errorf("%s: countries add up to %d, sources to %d and variants to %d, total %d", name, c, s, v, got.Total)
		}
	}
	check("everything", links[0], analytics.Range{From: start.Add(-time.Hour), To: start.Add(span + time.Hour), Interval: analytics.Week})
	for _, z := range zones {
		for _, i := range []analytics.Interval{analytics.Hour, analytics.Day, analytics.Week, analytics.Month} {
			check("everything in "+z.Name()+" by "+string(i), links[0], analytics.Range{From: start.Add(-time.Hour), To: start.Add(span + time.Hour), Interval: i, Zone: z})
		}
	}
	for i := range 150 {
		check(fmt.Sprintf("range %d", i), links[rnd.IntN(len(links))], randomRange(rnd, start, span))
		if t.Failed() {
			break
		}
	}
	// A workspace sees nothing of another's link, as with raw scans.
	check("other workspace", [2]uuid.UUID{ws2, links[0][1]}, analytics.Range{From: start, To: start.Add(span), Interval: analytics.Day})
	var recorded, counted int64
	if err := pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE `+folded+`) FROM scans`).Scan(&recorded, &counted); err != nil || counted != 2000 || recorded != 4000 {
		t.Fatalf("before the second fold %d of %d scans count (%v), want 2000 of 4000", counted, recorded, err)
	}
	f, err := scan.Fold(ctx, db)
	if err != nil || f.Rows == 0 || !f.AsOf.After(asOf) {
		t.Fatalf("folding the second half: %+v, %v", f, err)
	}
	asOf = f.AsOf
	for i := range 50 {
		check(fmt.Sprintf("range %d, all folded", i), links[rnd.IntN(len(links))], randomRange(rnd, start, span))
		if t.Failed() {
			break
		}
	}

	// Rebuilding from raw scans reproduces exactly what the writer kept.
	before := rollupSnapshot(t, pool)
	if n, err := scan.RebuildRollups(ctx, db, &links[0][1]); err != nil || n != 1 {
		t.Fatalf("rebuilt %d links: %v", n, err)
	}
	if _, err := scan.RebuildRollups(ctx, db, &ws1); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("rebuilding an unknown link: %v, want ErrNotFound", err)
	}
	if after := rollupSnapshot(t, pool); !reflect.DeepEqual(before, after) {
		t.Errorf("rebuilding one link changed the rollups:\n before %v\n after  %v", before, after)
	}
	if _, err := pool.Exec(ctx, `UPDATE scan_rollups SET scans = scans + 5, day_first = 0; DELETE FROM scan_visitor_days WHERE random() < 0.5;
		DELETE FROM scan_rollup_keys_daily WHERE random() < 0.5; UPDATE scan_rollup_keys_hourly SET scans = 1;
		UPDATE scan_workspace_days SET scans = scans * 2 WHERE random() < 0.5;
		UPDATE scan_rollup_keys_hourly SET scans_30 = scans WHERE random() < 0.5;
		UPDATE scan_workspace_hours SET scans_15 = scans WHERE random() < 0.5; DELETE FROM scan_workspace_hours WHERE random() < 0.2`); err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(before, rollupSnapshot(t, pool)) {
		t.Fatal("damaging the rollups changed nothing; the snapshot sees nothing")
	}
	if n, err := scan.RebuildRollups(ctx, db, nil); err != nil || n != len(links) {
		t.Fatalf("rebuilt %d links: %v", n, err)
	}
	if after := rollupSnapshot(t, pool); !reflect.DeepEqual(before, after) {
		t.Errorf("rebuilding every link did not restore the rollups:\n before %v\n after  %v", before, after)
	}
	check("after rebuild", links[2], analytics.Range{From: start.Add(90 * time.Minute), To: start.Add(span - 30*time.Minute), Interval: analytics.Day})
}

func sum(counts []analytics.KeyCount) (n int64) {
	for _, c := range counts {
		n += c.Scans
	}
	return n
}

// rollupSnapshot is every rollup row, in key order, as text.
func rollupSnapshot(t *testing.T, pool *pgxpool.Pool) map[string][]string {
	t.Helper()
	return snapshotOf(t, pool, "scan_rollups", "scan_rollup_keys_hourly", "scan_visitor_days", "(SELECT * FROM scan_workspace_hours WHERE scans <> 0)")
}

// legacyRollupSnapshot is rollupSnapshot without the quarter-hour
// counters of migrations 00044 and 00047.
func legacyRollupSnapshot(t *testing.T, pool *pgxpool.Pool) map[string][]string {
	t.Helper()
	return snapshotOf(t, pool, "(SELECT link_id, hour, workspace_id, scans, bots, uniq, day_first, day_last FROM scan_rollups WHERE scans + bots + day_first + day_last > 0)",
		"(SELECT link_id, hour, dim, key, workspace_id, scans FROM scan_rollup_keys_hourly)",
		"(SELECT link_id, day, visitor_hash, workspace_id, hours FROM scan_visitor_days)",
		"(SELECT workspace_id, dim, hour, key, scans FROM scan_workspace_hours WHERE scans <> 0)")
}

func snapshotOf(t *testing.T, pool *pgxpool.Pool, rollups, keysHourly, visitors, hours string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for table, order := range map[string]string{
		rollups:                  "link_id, hour",
		keysHourly:               "link_id, hour, dim, key",
		"scan_rollup_keys_daily": "link_id, day, dim, key",
		visitors:                 "link_id, day, visitor_hash",
		// The overview's hours; a rebuild may leave rows at zero.
		hours: "workspace_id, dim, hour, key",
		// The workspace overview; a rebuild may leave rows at zero.
		"(SELECT * FROM scan_workspace_days WHERE scans <> 0)": "workspace_id, day, dim, key",
		"(SELECT id, scan_count, last_scanned_at FROM links)":  "id",
	} {
		rows, err := pool.Query(context.Background(), fmt.Sprintf("SELECT t::text FROM %s t ORDER BY %s", table, order))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out[table] = append(out[table], s)
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
		if len(out[table]) == 0 {
			t.Fatalf("%s is empty", table)
		}
	}
	return out
}

// A range that runs to the present ends inside the hour in progress; that
// hour is read from its rollup, which must then equal the raw scans up to
// now, while a range that ends before now still reads the raw edge.
func TestRangesToTheHourInProgress(t *testing.T) {
	t.Parallel()
	rnd := seededRand(t, 11)
	pool := testkit.DB(t)
	db := store.NewDB(pool)
	ws := testkit.NewTenant(t, pool).WorkspaceID
	links := workspaceLinks(t, pool, ws, 1)
	// Scans from 10:00 up to "now", 10:45, and around the midnight before.
	hour := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	now := hour.Add(45 * time.Minute)

	asOf := recordRandomScans(t, rnd, db, links, hour, 45*time.Minute, 300, true).AsOf
	reports := analytics.NewReports(db, analytics.DefaultLimits())
	reports.Now = func() time.Time { return now }
	for _, r := range []analytics.Range{
		{From: hour.Add(-24 * time.Hour), To: now, Interval: analytics.Hour},
		{From: hour.Add(-24 * time.Hour), To: now, Interval: analytics.Day},
		{From: hour.Add(-72 * time.Hour), To: now.Add(time.Hour), Interval: analytics.Day},          // to in the future
		{From: hour.Add(-24 * time.Hour), To: hour.Add(30 * time.Minute), Interval: analytics.Hour}, // ends before now: raw edge
		{From: hour.Add(10 * time.Minute), To: now, Interval: analytics.Hour},                       // inside the hour in progress
	} {
		got, err := reports.Compute(context.Background(), ws, links[0][1], r)
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		want := reference(t, pool, ws, links[0][1], r)
		want.AsOf = asOf
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s..%s by %s with now %s:\n got  %+v\n want %+v", r.From.Format(time.RFC3339), r.To.Format(time.RFC3339), r.Interval, now.Format(time.RFC3339), got, want)
		}
		if got.Total == 0 {
			t.Errorf("%s..%s: no scans counted; the test saw nothing", r.From.Format(time.RFC3339), r.To.Format(time.RFC3339))
		}
	}

	// A range without a given to (the API's default) runs to the moment the
	// report is computed, not to when the request was parsed.
	open := analytics.Range{From: hour.Add(-24 * time.Hour), To: now.Add(-10 * time.Minute), Interval: analytics.Hour, Open: true}
	got, err := reports.Compute(context.Background(), ws, links[0][1], open)
	if err != nil {
		t.Fatal(err)
	}
	closed := analytics.Range{From: open.From, To: now, Interval: open.Interval}
	want := reference(t, pool, ws, links[0][1], closed)
	want.AsOf = asOf
	if !reflect.DeepEqual(got, want) || !got.To.Equal(now) {
		t.Errorf("open range parsed at %s, computed at %s:\n got  %+v\n want %+v", open.To.Format(time.RFC3339), now.Format(time.RFC3339), got, want)
	}
}

// A recorded scan is counted once the fold passes it, exactly once, and
// as_of moves to when that fold began.
func TestScansCountFromTheirFold(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	db := store.NewDB(pool)
	ws := testkit.NewTenant(t, pool).WorkspaceID
	l := [][2]uuid.UUID{{ws, testkit.Link(t, pool, &testkit.LinkOpts{WorkspaceID: ws})}}
	reports := analytics.NewReports(db, analytics.DefaultLimits())
	ctx := context.Background()
	day := analytics.Range{From: time.Now().Add(-time.Hour).Truncate(time.Hour), To: time.Now().Add(time.Hour).Truncate(time.Hour), Interval: analytics.Hour}
	report := func() analytics.Report {
		t.Helper()
		r, err := reports.Compute(ctx, ws, l[0][1], day)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	before := report()
	hasher, err := analytics.NewVisitorHasher([]byte("0123456789abcdef0123456789abcdef-rollup-test"))
	if err != nil {
		t.Fatal(err)
	}
	rec := scan.NewRecorder(scan.Options{DB: db, Log: testkit.Logger(t), Hasher: hasher})
	go rec.Run()
	if err := rec.Record(ctx, scan.Hit{LinkID: l[0][1], WorkspaceID: ws, At: time.Now(), UserAgent: userAgents[0], ClientIP: netip.MustParseAddr("192.0.2.1")}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if unfolded := report(); unfolded.Total != before.Total || !unfolded.AsOf.Equal(before.AsOf) {
		t.Errorf("before the fold: total %d as of %v, want %d as of %v", unfolded.Total, unfolded.AsOf, before.Total, before.AsOf)
	}
	recorded := time.Now()
	f, err := scan.Fold(ctx, db)
	if err != nil || f.Scans != 1 {
		t.Fatalf("fold: %+v, %v", f, err)
	}
	folded := report()
	if folded.Total != before.Total+1 || folded.Unique != before.Unique+1 {
		t.Errorf("folded: total %d unique %d, want %d and %d", folded.Total, folded.Unique, before.Total+1, before.Unique+1)
	}
	if !folded.AsOf.Equal(f.AsOf) || folded.AsOf.Before(recorded.Add(-time.Second)) || folded.AsOf.After(time.Now()) {
		t.Errorf("as_of %v, want the fold's start %v (after the scan was recorded at %v)", folded.AsOf, f.AsOf, recorded)
	}
	if again, err := scan.Fold(ctx, db); err != nil || again.Scans != 0 {
		t.Errorf("a second fold took %+v, %v; want nothing", again, err)
	}
	if twice := report(); twice.Total != folded.Total {
		t.Errorf("after a second fold: total %d, want %d", twice.Total, folded.Total)
	}
}

// A range that ended before the report is answered again from memory while
// the rollups' version stays, and computed anew once a fold or a rebuild
// moves it; a range that runs to now is always computed.
func TestPastRangesAreAnsweredAgainUntilTheRollupsChange(t *testing.T) {
	t.Parallel()
	rnd := seededRand(t, 13)
	pool := testkit.DB(t)
	db := store.NewDB(pool)
	ws := testkit.NewTenant(t, pool).WorkspaceID
	links := workspaceLinks(t, pool, ws, 1)
	start := time.Date(2026, 2, 2, 0, 0, 0, 0, time.UTC)
	recordRandomScans(t, rnd, db, links, start, 48*time.Hour, 300, true)
	reports := analytics.NewReports(db, analytics.DefaultLimits())
	ctx := context.Background()
	compute := func(r analytics.Range) analytics.Report {
		t.Helper()
		rep, err := reports.Compute(ctx, ws, links[0][1], r)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	past := analytics.Range{From: start, To: start.Add(48 * time.Hour), Interval: analytics.Day}
	first := compute(past)
	if first.Total == 0 {
		t.Fatal("no scans counted; the test sees nothing")
	}
	first.Series[0].Scans = -1 // the caller's copy: the kept answer must not change
	first = compute(past)
	// Rollups changed behind the fold's back (the version stays): the same
	// question gets the kept answer; one that runs to now sees the change.
	if _, err := pool.Exec(ctx, `UPDATE scan_rollups SET scans = scans + 1000`); err != nil {
		t.Fatal(err)
	}
	if again := compute(past); !reflect.DeepEqual(again, first) {
		t.Errorf("asked again at the same version:\n got  %+v\n want %+v", again, first)
	}
	ahead := analytics.Range{From: start, To: time.Now().Add(time.Hour), Interval: analytics.Day}
	if fresh := compute(ahead); fresh.Total <= first.Total {
		t.Errorf("a range ending ahead: total %d, want it computed anew (more than %d)", fresh.Total, first.Total)
	}
	// A range to now is answered again while its last bucket stays, with
	// its own to.
	open := analytics.Range{From: start, To: time.Now(), Interval: analytics.Month, Open: true}
	toNow := compute(open)
	if _, err := pool.Exec(ctx, `UPDATE scan_rollups SET scans = scans + 1000`); err != nil {
		t.Fatal(err)
	}
	open.To = time.Now()
	if again := compute(open); again.Total != toNow.Total || !again.To.After(toNow.To) || len(again.Series) != len(toNow.Series) {
		t.Errorf("a range to now asked again: total %d to %v, want %d and a later to than %v", again.Total, again.To, toNow.Total, toNow.To)
	}
	// A rebuild moves the version: the answer is computed again, from
	// rollups rebuilt to what the scans say.
	if _, err := scan.RebuildRollups(ctx, db, &links[0][1]); err != nil {
		t.Fatal(err)
	}
	want := reference(t, pool, ws, links[0][1], past)
	want.AsOf = first.AsOf
	if rebuilt := compute(past); !reflect.DeepEqual(rebuilt, want) {
		t.Errorf("after a rebuild:\n got  %+v\n want %+v", rebuilt, want)
	}
}

// Days with a daylight-saving change have 23 or 25 hourly buckets, each
// starting on the local hour, and still match the raw scans.
func TestDaylightSavingDays(t *testing.T) {
	t.Parallel()
	rnd := seededRand(t, 17)
	pool := testkit.DB(t)
	db := store.NewDB(pool)
	ws := testkit.NewTenant(t, pool).WorkspaceID
	links := workspaceLinks(t, pool, ws, 1)
	ny := tz.MustParse("America/New_York")
	loc := ny.Location()
	reports := analytics.NewReports(db, analytics.DefaultLimits())
	for _, c := range []struct {
		day   time.Time
		hours int
	}{
		{time.Date(2026, 3, 8, 0, 0, 0, 0, loc), 23},
		{time.Date(2026, 11, 1, 0, 0, 0, 0, loc), 25},
		{time.Date(2026, 11, 2, 0, 0, 0, 0, loc), 24},
	} {
		end := c.day.AddDate(0, 0, 1)
		asOf := recordRandomScans(t, rnd, db, links, c.day.Add(-2*time.Hour), end.Sub(c.day)+4*time.Hour, 400, true).AsOf
		r := analytics.Range{From: c.day, To: end, Interval: analytics.Hour, Zone: ny}
		got, err := reports.Compute(context.Background(), ws, links[0][1], r)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Series) != c.hours || got.Timezone != "America/New_York" {
			t.Errorf("%s: %d hourly buckets in %s, want %d", c.day.Format(time.DateOnly), len(got.Series), got.Timezone, c.hours)
		}
		for i, b := range got.Series {
			if want := c.day.Add(time.Duration(i) * time.Hour); !b.Start.Equal(want) || b.Start.In(loc).Minute() != 0 {
				t.Errorf("%s: bucket %d starts %s, want %s", c.day.Format(time.DateOnly), i, b.Start, want)
			}
		}
		want := reference(t, pool, ws, links[0][1], r)
		want.AsOf = asOf
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s by hour:\n got  %+v\n want %+v", c.day.Format(time.DateOnly), got, want)
		}
		byDay := analytics.Range{From: c.day.AddDate(0, 0, -1), To: end.AddDate(0, 0, 1), Interval: analytics.Day, Zone: ny}
		if got, err := reports.Compute(context.Background(), ws, links[0][1], byDay); err != nil || len(got.Series) != 3 || !got.Series[1].Start.Equal(c.day) {
			t.Errorf("%s by day: %+v, %v", c.day.Format(time.DateOnly), got.Series, err)
		} else if want := reference(t, pool, ws, links[0][1], byDay); !reflect.DeepEqual(got.Series, want.Series) {
			t.Errorf("%s by day:\n got  %+v\n want %+v", c.day.Format(time.DateOnly), got.Series, want.Series)
		}
	}
}
