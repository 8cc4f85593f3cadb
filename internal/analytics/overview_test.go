package analytics_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/strict"
	"github.com/linkqr/linkqr/internal/tz"
)

// insertScans writes n scans of one link at an instant, straight into the
// table (the recorder is tested elsewhere); country "" is unknown.
func insertScans(t *testing.T, pool *pgxpool.Pool, ws, link uuid.UUID, at time.Time, n int, country, source string, bot bool) {
	t.Helper()
	var c any
	if country != "" {
		c = country
	}
	if _, err := pool.Exec(context.Background(), `INSERT INTO scans (id, workspace_id, link_id, occurred_at, device, os, browser, bot, visitor_hash, country, source)
		SELECT gen_random_uuid(), $1, $2, $3, 'mobile', 'iOS', 'Safari', $4, '\x00', $5, $6 FROM generate_series(1, $7)`,
		ws, link, at, bot, c, source, n); err != nil {
		t.Fatal(err)
	}
}

// TestOverviewAddsUpAndKeepsToItsWorkspace: the overview of a workspace
// counts its human scans of the range's days, every part adding up to the
// total (days, countries, sources), ranks its top ten links with their
// names (a deleted one marked), and shows nothing of another workspace
// scanned on the same days.
func TestOverviewAddsUpAndKeepsToItsWorkspace(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	db := store.NewDB(pool)
	ctx := context.Background()
	ws1, ws2 := testkit.NewTenant(t, pool).WorkspaceID, testkit.NewTenant(t, pool).WorkspaceID
	today := analytics.Day.Truncate(time.Now())
	noon := today.Add(-12 * time.Hour) // yesterday, safely in the past

	// Twelve links of ws1: link i has i+1 scans yesterday, from Germany by QR
	// code when i is even, of unknown country by link otherwise.
	var links []uuid.UUID
	for i := range 12 {
		id := testkit.Link(t, pool, &testkit.LinkOpts{WorkspaceID: ws1, Code: fmt.Sprintf("ov%02d-%s", i, uuid.NewString()[:6])})
		if _, err := pool.Exec(ctx, `UPDATE links SET title = $2 WHERE id = $1`, id, fmt.Sprintf("Link %02d", i)); err != nil {
			t.Fatal(err)
		}
		links = append(links, id)
		if i%2 == 0 {
			insertScans(t, pool, ws1, id, noon, i+1, "DE", "qr", false)
		} else {
			insertScans(t, pool, ws1, id, noon, i+1, "", "link", false)
		}
	}
	// More for the top link, on other days: 10 days ago from France (inside
	// the 30 days), 40 days ago (outside); and bots, never counted.
	insertScans(t, pool, ws1, links[11], today.AddDate(0, 0, -10).Add(3*time.Hour), 5, "FR", "link", false)
	insertScans(t, pool, ws1, links[11], today.AddDate(0, 0, -40), 100, "US", "qr", false)
	insertScans(t, pool, ws1, links[0], noon, 50, "CN", "link", true)
	// Another workspace, on the same days, with its own country.
	other := testkit.Link(t, pool, &testkit.LinkOpts{WorkspaceID: ws2})
	insertScans(t, pool, ws2, other, noon, 500, "JP", "qr", false)
	insertScans(t, pool, ws2, other, today.AddDate(0, 0, -10), 7, "BR", "link", false)

	if _, err := scan.Fold(ctx, db); err != nil {
		t.Fatal(err)
	}
	// A top link deleted after it was scanned.
	if _, err := pool.Exec(ctx, `UPDATE links SET deleted_at = now() WHERE id = $1`, links[10]); err != nil {
		t.Fatal(err)
	}

	reports := analytics.NewReports(db, analytics.DefaultLimits())
	o, err := reports.Overview(ctx, ws1, today.AddDate(0, 0, -29), today.AddDate(0, 0, 1), tz.UTC)
	if err != nil {
		t.Fatal(err)
	}
	const want = 78 + 5 // 1+…+12 yesterday, 5 ten days ago
	if o.Total != want {
		t.Errorf("total %d, want %d", o.Total, want)
	}
	if len(o.Days) != 30 || !o.Days[0].Start.Equal(today.AddDate(0, 0, -29)) || !o.Days[29].Start.Equal(today) {
		t.Fatalf("%d days from %v", len(o.Days), o.Days)
	}
	var days, countries, sources int64
	for _, d := range o.Days {
		days += d.Scans
	}
	for _, c := range o.Countries {
		countries += c.Scans
		if c.Key == "JP" || c.Key == "BR" || c.Key == "US" || c.Key == "CN" {
			t.Errorf("country %s: another workspace's, from outside the range or a bot's", c.Key)
		}
	}
	for _, s := range o.Sources {
		sources += s.Scans
	}
	if days != o.Total || countries != o.Total || sources != o.Total {
		t.Errorf("days %d, countries %d, sources %d: each must be the total %d", days, countries, sources, o.Total)
	}
	if o.Days[28].Scans != 78 || o.Days[19].Scans != 5 {
		t.Errorf("yesterday %d (want 78), ten days ago %d (want 5)", o.Days[28].Scans, o.Days[19].Scans)
	}
	// Germany: links 0, 2, …, 10 (1+3+5+7+9+11); unknown: 2+4+…+12.
	wantCountries := []analytics.KeyCount{{Key: "(unknown)", Scans: 42}, {Key: "DE", Scans: 36}, {Key: "FR", Scans: 5}}
	if fmt.Sprint(o.Countries) != fmt.Sprint(wantCountries) {
		t.Errorf("countries %v, want %v", o.Countries, wantCountries)
	}
	wantSources := []analytics.KeyCount{{Key: "link", Scans: 47}, {Key: "qr", Scans: 36}}
	if fmt.Sprint(o.Sources) != fmt.Sprint(wantSources) {
		t.Errorf("sources %v, want %v", o.Sources, wantSources)
	}

	// The top ten: link 11 (12+5), 10 (deleted), 9, …, 2.
	if len(o.TopLinks) != analytics.OverviewTopLinks {
		t.Fatalf("%d top links", len(o.TopLinks))
	}
	for i, l := range o.TopLinks {
		n := 11 - i
		wantScans := int64(n + 1)
		if n == 11 {
			wantScans += 5
		}
		if l.ID != links[n] || l.Scans != wantScans || l.Title != fmt.Sprintf("Link %02d", n) || l.Deleted != (n == 10) || l.Code == "" {
			t.Errorf("top link %d: %+v, want link %d with %d scans", i, l, n, wantScans)
		}
	}
	if o.AsOf.IsZero() || o.AsOf.After(time.Now()) {
		t.Errorf("as of %v", o.AsOf)
	}

	// The other workspace sees only its own.
	o2, err := reports.Overview(ctx, ws2, today.AddDate(0, 0, -6), today.AddDate(0, 0, 1), tz.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if o2.Total != 500 || len(o2.TopLinks) != 1 || o2.TopLinks[0].ID != other || fmt.Sprint(o2.Countries) != "[{JP 500}]" || len(o2.Days) != 7 {
		t.Errorf("the other workspace's overview: %+v", o2)
	}

	// A workspace without scans: zeros, every day still there.
	o3, err := reports.Overview(ctx, testkit.NewTenant(t, pool).WorkspaceID, today.AddDate(0, 0, -89), today.AddDate(0, 0, 1), tz.UTC)
	if err != nil || o3.Total != 0 || len(o3.Days) != 90 || len(o3.TopLinks) != 0 || len(o3.Countries) != 0 {
		t.Errorf("an empty workspace: %+v, %v", o3, err)
	}
	if _, err := reports.Overview(ctx, ws1, today, today, tz.UTC); err == nil {
		t.Error("an empty range was accepted")
	}
}

// seedOverview fills the overview's tables of ws as the fold would for
// 10,000 links each scanned once on each of days UTC days from first (link
// 0 twice), at an hour and quarter that move with the link and the day,
// from 60 countries, one scan in five by QR code: one scan_workspace_days
// row per link and day, the countries' and sources' per day and per hour
// (scan_workspace_hours), and one scan_rollups row per link and day. The
// link ids have no links row (the overview marks them deleted). It
// returns the count of seeded scans in [from, to).
func seedOverview(tb testing.TB, pool *pgxpool.Pool, ws uuid.UUID, first time.Time, days int) func(from, to time.Time) int64 {
	tb.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	minute := "extract(minute FROM at AT TIME ZONE 'UTC')"
	for i, stmt := range []string{`
		CREATE TEMPORARY TABLE seed ON COMMIT DROP AS
		SELECT CASE WHEN l = 0 THEN '00000000-0000-0000-0000-000000000001'::uuid ELSE md5(l::text)::uuid END AS link,
		       $1::timestamptz + i * interval '1 day' + ((l * 7 + i) % 24) * interval '1 hour' + (15 * ((l + i) % 4) + 5) * interval '1 minute' AS at,
		       chr(65 + (l + i) % 60 / 26) || chr(65 + (l + i) % 60 % 26) AS country,
		       CASE WHEN (l + i) % 5 = 0 THEN 'qr' ELSE 'link' END AS source, 1 + (l = 0)::int AS n
		FROM generate_series(0, 9999) l, generate_series(0, $2::int - 1) i`, `
		INSERT INTO scan_workspace_days (workspace_id, day, dim, key, scans)
		SELECT $1::uuid, (at AT TIME ZONE 'UTC')::date, 'l', link::text, sum(n) FROM seed GROUP BY 2, 4
		UNION ALL
		SELECT $1::uuid, (at AT TIME ZONE 'UTC')::date, k.dim, k.key, sum(n)
		FROM seed CROSS JOIN LATERAL (VALUES ('c', country), ('s', source)) k(dim, key) GROUP BY 2, 3, 4`, `
		INSERT INTO scan_workspace_hours (workspace_id, dim, hour, key, scans, scans_15, scans_30, scans_45)
		SELECT $1::uuid, k.dim, date_trunc('hour', at, 'UTC'), k.key, sum(n), sum(CASE WHEN ` + minute + ` < 15 THEN n ELSE 0 END),
		       sum(CASE WHEN ` + minute + ` < 30 THEN n ELSE 0 END), sum(CASE WHEN ` + minute + ` < 45 THEN n ELSE 0 END)
		FROM seed CROSS JOIN LATERAL (VALUES ('c', country), ('s', source)) k(dim, key) GROUP BY 2, 3, 4`, `
		INSERT INTO scan_rollups (link_id, hour, workspace_id, scans, bots, uniq, day_first, day_last, scans_15, scans_30, scans_45)
		SELECT link, date_trunc('hour', at, 'UTC'), $1::uuid, n, 0, 1, 1, 1, CASE WHEN ` + minute + ` < 15 THEN n ELSE 0 END,
		       CASE WHEN ` + minute + ` < 30 THEN n ELSE 0 END, CASE WHEN ` + minute + ` < 45 THEN n ELSE 0 END
		FROM seed`,
	} {
		args := []any{ws}
		if i == 0 {
			args = []any{first, days}
		}
		if _, err := tx.Exec(ctx, stmt, args...); err != nil {
			tb.Fatalf("%v: %s", err, stmt)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		tb.Fatal(err)
	}
	for _, table := range []string{"scan_workspace_days", "scan_workspace_hours", "scan_rollups"} {
		if _, err := pool.Exec(ctx, "ANALYZE "+table); err != nil {
			tb.Fatal(err)
		}
	}
	return func(from, to time.Time) int64 {
		var n int64
		for l := range 10000 {
			for i := range days {
				at := first.AddDate(0, 0, i).Add(time.Duration((l*7+i)%24)*time.Hour + time.Duration(15*((l+i)%4)+5)*time.Minute)
				if !at.Before(from) && at.Before(to) {
					n += int64(1 + btoi(l == 0))
				}
			}
		}
		return n
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestOverviewAt10000Links: 10,000 links scanned on each of 90 days (the
// largest range the page offers) from 60 countries: the overview, in UTC
// and in zones west and east, off the whole hour too, answers well within
// the statement timeout and counts every scan of its days.
func TestOverviewAt10000Links(t *testing.T) {
	t.Parallel()
	strict.SkipShort(t, "2.7 million overview rows loaded")
	pool := testkit.DB(t)
	db := store.NewDB(pool)
	ctx := context.Background()
	ws := testkit.NewTenant(t, pool).WorkspaceID
	today := analytics.Day.Truncate(time.Now())
	count := seedOverview(t, pool, ws, today.AddDate(0, 0, -90), 92)
	reports := analytics.NewReports(db, analytics.DefaultLimits())
	for _, name := range []string{"UTC", "America/New_York", "Asia/Kolkata"} {
		zone := tz.MustParse(name)
		loc := zone.Location()
		last := analytics.Day.TruncateIn(time.Now(), loc)
		from, to := last.AddDate(0, 0, -89), last.AddDate(0, 0, 1)
		start := time.Now()
		o, err := reports.Overview(ctx, ws, from, to, zone)
		took := time.Since(start)
		var busy *analytics.BusyError
		if errors.As(err, &busy) {
			t.Fatalf("the overview of 10,000 links × 90 days in %s hit the limits after %v: %v", name, took, err)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("overview of 10,000 links × 90 days in %s: %v", name, took)
		want := count(from, to)
		// Link 0, twice a day: 180 scans in 90 UTC days, 178 when its scan
		// hour falls outside both partial days at the ends.
		if o.Total != want || sum(o.Countries) != want || sum(o.Sources) != want || len(o.Countries) != 60 || len(o.Days) != 90 ||
			len(o.TopLinks) != analytics.OverviewTopLinks || o.TopLinks[0].Scans < 178 || !o.TopLinks[0].Deleted {
			t.Errorf("%s: total %d (want %d), countries %d, sources %d, %d days, top %+v", name, o.Total, want, sum(o.Countries), sum(o.Sources), len(o.Days), o.TopLinks[:1])
		}
		if name == "UTC" && want != 90*10001 {
			t.Errorf("UTC: %d scans seeded in the 90 days, want %d", want, 90*10001)
		}
	}
}

// BenchmarkOverview90Days is the overview's read of 90 days of a
// workspace of 10,000 links each scanned every day (seedOverview), per
// zone: UTC reads whole UTC days only; New York and Kolkata also read the
// partial UTC days at both ends from hours.
func BenchmarkOverview90Days(b *testing.B) {
	pool := testkit.DB(b)
	db := store.NewDB(pool)
	ctx := context.Background()
	ws := testkit.NewTenant(b, pool).WorkspaceID
	today := analytics.Day.Truncate(time.Now())
	seedOverview(b, pool, ws, today.AddDate(0, 0, -90), 92)
	limits := analytics.DefaultLimits()
	limits.StatementTimeout = time.Minute
	reports := analytics.NewReports(db, limits)
	for _, name := range []string{"UTC", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu"} {
		b.Run(name, func(b *testing.B) {
			zone := tz.MustParse(name)
			last := analytics.Day.TruncateIn(time.Now(), zone.Location())
			for range b.N {
				if _, err := reports.Overview(ctx, ws, last.AddDate(0, 0, -89), last.AddDate(0, 0, 1), zone); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// overviewReference is the workspace overview of the local days [from, to)
// of zone counted from the raw scans the folds have passed: days cut by
// PostgreSQL's date_trunc in the zone, countries, sources and the top links
// ranked as the overview ranks them (their names are not compared).
func overviewReference(t *testing.T, pool *pgxpool.Pool, ws uuid.UUID, from, to time.Time, zone tz.Zone) analytics.Overview {
	t.Helper()
	ctx := context.Background()
	o := analytics.Overview{From: from.UTC(), To: to.UTC(), Zone: zone, Days: []analytics.Bucket{}, TopLinks: []analytics.OverviewLink{},
		Countries: []analytics.KeyCount{}, Sources: []analytics.KeyCount{}}
	where := `FROM scans WHERE workspace_id = $1 AND occurred_at >= $2 AND occurred_at < $3 AND NOT bot AND ` + folded
	rows, err := pool.Query(ctx, `SELECT date_trunc('day', occurred_at, $4), count(*) `+where+` GROUP BY 1`, ws, from, to, zone.Name())
	if err != nil {
		t.Fatal(err)
	}
	byDay := map[time.Time]int64{}
	for rows.Next() {
		var d time.Time
		var n int64
		if err := rows.Scan(&d, &n); err != nil {
			t.Fatal(err)
		}
		byDay[d.UTC()] = n
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	loc := zone.Location()
	for d := from.UTC(); d.Before(to); d = analytics.Day.NextIn(d, loc).UTC() {
		if !isMidnight(d, loc) {
			t.Fatalf("day %s does not start at midnight in %s", d, zone)
		}
		o.Days = append(o.Days, analytics.Bucket{Start: d, Scans: byDay[d]})
		o.Total += byDay[d]
		delete(byDay, d)
	}
	if len(byDay) != 0 {
		t.Fatalf("PostgreSQL cut days %v in %s, not among the overview's", byDay, zone)
	}
	for _, k := range []struct {
		expr string
		into *[]analytics.KeyCount
	}{{"COALESCE(country, '(unknown)')::text", &o.Countries}, {"source", &o.Sources}} {
		*k.into = append(*k.into, keyCounts(t, pool, `SELECT `+k.expr+`, count(*) `+where+` GROUP BY 1 ORDER BY 2 DESC, 1`, ws, from, to)...)
	}
	rows, err = pool.Query(ctx, `SELECT link_id, count(*) `+where+` GROUP BY 1 ORDER BY 2 DESC, link_id::text LIMIT $4`, ws, from, to, analytics.OverviewTopLinks)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var l analytics.OverviewLink
		if err := rows.Scan(&l.ID, &l.Scans); err != nil {
			t.Fatal(err)
		}
		o.TopLinks = append(o.TopLinks, l)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	return o
}

// sameOverview compares an overview with its reference, top links by id
// and scans only.
func sameOverview(got, want analytics.Overview) bool {
	if len(got.TopLinks) != len(want.TopLinks) {
		return false
	}
	for i := range got.TopLinks {
		if got.TopLinks[i].ID != want.TopLinks[i].ID || got.TopLinks[i].Scans != want.TopLinks[i].Scans {
			return false
		}
	}
	g, w := got, want
	g.TopLinks, w.TopLinks, g.AsOf, w.AsOf = nil, nil, time.Time{}, time.Time{}
	return reflect.DeepEqual(g, w)
}

// TestOverviewAnswersLikeRawScans is the overview's property: in UTC, New
// York, Kolkata (+5:30) and Kathmandu (+5:45), over any whole local days,
// its days (starting at local midnight), total, countries, sources and top
// links equal a recount of the raw scans the folds passed; another
// workspace's scans on the same days never appear; and a rebuild of every
// link leaves every answer as it was.
func TestOverviewAnswersLikeRawScans(t *testing.T) {
	t.Parallel()
	rnd := seededRand(t, 23)
	pool := testkit.DB(t)
	db := store.NewDB(pool)
	ctx := context.Background()
	ws1, ws2 := testkit.NewTenant(t, pool).WorkspaceID, testkit.NewTenant(t, pool).WorkspaceID
	links := append(workspaceLinks(t, pool, ws1, 12), workspaceLinks(t, pool, ws2, 1)...) // more than the ten top links
	start, span := time.Date(2026, 1, 24, 0, 0, 0, 0, time.UTC), 17*24*time.Hour
	// Half folded, half not yet: the overview counts the folded half.
	recordRandomScans(t, rnd, db, links, start, span, 3000, true)
	recordRandomScans(t, rnd, db, links, start, span, 1000, false)

	reports := analytics.NewReports(db, analytics.DefaultLimits())
	check := func(name string, ws uuid.UUID, from, to time.Time, zone tz.Zone) analytics.Overview {
		t.Helper()
		got, err := reports.Overview(ctx, ws, from, to, zone)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := overviewReference(t, pool, ws, from, to, zone)
		if !sameOverview(got, want) {
			t.Errorf("%s: %s..%s in %s:\n got  %+v\n want %+v", name, from.Format(time.RFC3339), to.Format(time.RFC3339), zone, got, want)
		}
		if c, s := sum(got.Countries), sum(got.Sources); c != got.Total || s != got.Total {
			t.Errorf("%s: countries add up to %d, sources to %d, total %d", name, c, s, got.Total)
		}
		for _, l := range got.TopLinks {
			if l.ID == links[len(links)-1][1] && ws == ws1 {
				t.Errorf("%s: another workspace's link among the top links", name)
			}
		}
		return got
	}
	ranges := func(zone tz.Zone, n int) [][2]time.Time {
		loc := zone.Location()
		out := [][2]time.Time{{analytics.Day.TruncateIn(start.Add(-24*time.Hour), loc), analytics.Day.TruncateIn(start.Add(span+24*time.Hour), loc)}}
		for range n {
			first := analytics.Day.TruncateIn(start.Add(time.Duration(rnd.Int64N(int64(span+48*time.Hour)))-24*time.Hour), loc)
			out = append(out, [2]time.Time{first, first.AddDate(0, 0, 1+rnd.IntN(12))})
		}
		return out
	}
	for _, z := range zones {
		for i, r := range ranges(z, 25) {
			o := check(fmt.Sprintf("%s range %d", z, i), ws1, r[0], r[1], z)
			if i == 0 && (o.Total < 1000 || len(o.TopLinks) != analytics.OverviewTopLinks) {
				t.Fatalf("everything in %s: total %d, %d top links; the test sees too little", z, o.Total, len(o.TopLinks))
			}
		}
		// The other workspace: its own scans only.
		if o := check(z.Name()+" other workspace", ws2, ranges(z, 0)[0][0], ranges(z, 0)[0][1], z); len(o.TopLinks) != 1 || o.TopLinks[0].ID != links[len(links)-1][1] {
			t.Errorf("the other workspace's top links: %+v", o.TopLinks)
		}
		if t.Failed() {
			return
		}
	}

	// Everything folded, then every link rebuilt from the raw scans: the
	// same answers.
	if _, err := scan.Fold(ctx, db); err != nil {
		t.Fatal(err)
	}
	for _, damage := range []string{`UPDATE scan_workspace_hours SET scans_15 = scans, scans_30 = scans, scans_45 = scans WHERE workspace_id = $1`,
		`UPDATE scan_rollup_keys_hourly SET scans_15 = 0, scans_30 = scans WHERE workspace_id = $1`} {
		if _, err := pool.Exec(ctx, damage, ws1); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := scan.RebuildRollups(ctx, db, nil); err != nil || n != len(links) {
		t.Fatalf("rebuilt %d links: %v", n, err)
	}
	for _, z := range zones {
		for j, r := range ranges(z, 4) {
			check(fmt.Sprintf("%s range %d after the rebuild", z, j), ws1, r[0], r[1], z)
		}
	}

	// Scans loaded without a transaction id (a restore, testkit.Scan) count
	// once their link is rebuilt, in the overview too: the link's part of
	// the overview's hours is taken out and added back.
	if _, err := pool.Exec(ctx, `INSERT INTO scans (id, workspace_id, link_id, occurred_at, device, os, browser, bot, visitor_hash, country, source, xid)
		SELECT gen_random_uuid(), $1, $2, $3::timestamptz + i * interval '37 minutes', 'mobile', 'iOS', 'Safari', false, '\x01', 'NP', 'qr', NULL
		FROM generate_series(1, 300) i`, ws1, links[3][1], start); err != nil {
		t.Fatal(err)
	}
	if _, err := scan.RebuildRollups(ctx, db, &links[3][1]); err != nil {
		t.Fatal(err)
	}
	for _, z := range zones {
		for j, r := range ranges(z, 3) {
			check(fmt.Sprintf("%s range %d after loading scans of one link", z, j), ws1, r[0], r[1], z)
		}
	}
}

// TestOverviewDaylightSavingDays: a day with a daylight-saving change is
// one day of 23 or 25 hours, in a zone with an offset (New York) and in
// one that is at UTC in winter (London, whose 23-hour day lies inside one
// UTC day), and matches the raw scans.
func TestOverviewDaylightSavingDays(t *testing.T) {
	t.Parallel()
	rnd := seededRand(t, 29)
	pool := testkit.DB(t)
	db := store.NewDB(pool)
	ws := testkit.NewTenant(t, pool).WorkspaceID
	links := workspaceLinks(t, pool, ws, 2)
	reports := analytics.NewReports(db, analytics.DefaultLimits())
	for _, c := range []struct {
		zone  string
		day   [3]int
		hours int
	}{
		{"America/New_York", [3]int{2026, 3, 8}, 23},
		{"America/New_York", [3]int{2026, 11, 1}, 25},
		{"Europe/London", [3]int{2026, 3, 29}, 23},
		{"Europe/London", [3]int{2026, 10, 25}, 25},
	} {
		zone := tz.MustParse(c.zone)
		loc := zone.Location()
		day := time.Date(c.day[0], time.Month(c.day[1]), c.day[2], 0, 0, 0, 0, loc)
		from, to := day.AddDate(0, 0, -1), day.AddDate(0, 0, 2)
		recordRandomScans(t, rnd, db, links, from.Add(-2*time.Hour), to.Sub(from)+4*time.Hour, 600, true)
		got, err := reports.Overview(context.Background(), ws, from, to, zone)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Days) != 3 || !got.Days[1].Start.Equal(day) || got.Days[2].Start.Sub(got.Days[1].Start) != time.Duration(c.hours)*time.Hour {
			t.Errorf("%s %s: days %+v, want the middle one of %d hours", c.zone, day.Format(time.DateOnly), got.Days, c.hours)
		}
		if want := overviewReference(t, pool, ws, from, to, zone); !sameOverview(got, want) || got.Days[1].Scans == 0 {
			t.Errorf("%s %s:\n got  %+v\n want %+v", c.zone, day.Format(time.DateOnly), got, want)
		}
	}
}
