package analytics_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/tz"
)

// TestScansBeforeCountriesCountAsUnknownLinkScans: scans and rollups made
// before migration 00028 read as country null and source link after it;
// every range's countries and sources add up to its total, the workspace
// overview holds them, and a rebuild of every link computes exactly what
// the migration filled in.
func TestScansBeforeCountriesCountAsUnknownLinkScans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testkit.DBAt(t, 27)
	// The workspace row as that schema has it (the account service reads
	// the columns of the latest one).
	var ws uuid.UUID
	if err := pool.QueryRow(ctx, `INSERT INTO workspaces (id, name) VALUES (gen_random_uuid(), 'old') RETURNING id`).Scan(&ws); err != nil {
		t.Fatal(err)
	}
	link := testkit.Link(t, pool, &testkit.LinkOpts{WorkspaceID: ws})
	// 300 scans over two days, a third by bots, three visitors, folded by
	// the rebuild of that schema (scans without xid count there).
	start := time.Date(2026, 10, 3, 22, 0, 0, 0, time.UTC)
	if _, err := pool.Exec(ctx, `INSERT INTO scans (id, workspace_id, link_id, occurred_at, referrer_host, device, os, browser, bot, visitor_hash, xid)
		SELECT gen_random_uuid(), $1, $2, $3::timestamptz + i * interval '7 minutes', CASE WHEN i % 4 = 0 THEN 'news.example' END,
		       'mobile', 'iOS', 'Safari', i % 3 = 0, decode(lpad((i % 3)::text, 32, '0'), 'hex'), NULL
		FROM generate_series(1, 300) i`, ws, link, start); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `SELECT rebuild_scan_rollups(NULL)`); err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, pool, testkit.Logger(t)); err != nil {
		t.Fatal(err)
	}

	db := store.NewDB(pool)
	reports := analytics.NewReports(db, analytics.DefaultLimits())
	for _, r := range []analytics.Range{
		{From: start.Add(-time.Hour), To: start.Add(48 * time.Hour), Interval: analytics.Day},
		{From: start.Add(90 * time.Minute), To: start.Add(26*time.Hour + 20*time.Minute), Interval: analytics.Hour},
	} {
		rep, err := reports.Compute(ctx, ws, link, r)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Total == 0 || fmt.Sprint(rep.Countries) != fmt.Sprintf("[{(unknown) %d}]", rep.Total) || fmt.Sprint(rep.Sources) != fmt.Sprintf("[{link %d}]", rep.Total) {
			t.Errorf("%s..%s: total %d, countries %v, sources %v", r.From, r.To, rep.Total, rep.Countries, rep.Sources)
		}
	}
	scans, _, err := scan.NewReader(db).List(ctx, ws, link, nil, 1)
	if err != nil || len(scans) != 1 || scans[0].Country.Known() || scans[0].Source != scan.SourceLink {
		t.Errorf("an old scan: %+v, %v", scans, err)
	}
	var overview, human int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT sum(scans) FROM scan_workspace_days WHERE workspace_id = $1 AND dim = 's' AND key = 'link'),
		(SELECT count(*) FROM scans WHERE NOT bot)`, ws).Scan(&overview, &human); err != nil || overview != 200 || human != 200 {
		t.Errorf("overview holds %d link scans of %d human scans (%v), want 200", overview, human, err)
	}
	// The columns 00028 filled in (00044's quarter-hour counters place old
	// scans in their hour's first quarter, which a rebuild makes exact).
	before := legacyRollupSnapshot(t, pool)
	if _, err := scan.RebuildRollups(ctx, db, nil); err != nil {
		t.Fatal(err)
	}
	if after := legacyRollupSnapshot(t, pool); !reflect.DeepEqual(before, after) {
		t.Errorf("the migration's rollups differ from a rebuild's:\n migration %v\n rebuild   %v", before, after)
	}
}

// TestOverviewHoursFromBeforeTheirMigration: migration 00047 fills the
// overview's hours from the per-link hourly breakdowns, each hour's scans
// in its first quarter, so the overview of what was folded before it is
// exact in UTC and whole-hour zones at once, and in zones off the whole
// hour after a rebuild of every link.
func TestOverviewHoursFromBeforeTheirMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testkit.DBAt(t, 44)
	var ws uuid.UUID
	if err := pool.QueryRow(ctx, `INSERT INTO workspaces (id, name) VALUES (gen_random_uuid(), 'old') RETURNING id`).Scan(&ws); err != nil {
		t.Fatal(err)
	}
	links := []uuid.UUID{testkit.Link(t, pool, &testkit.LinkOpts{WorkspaceID: ws}), testkit.Link(t, pool, &testkit.LinkOpts{WorkspaceID: ws})}
	// 600 scans over five days, every 11 minutes, from four countries and
	// both sources; a tenth by bots.
	start := time.Date(2026, 10, 3, 17, 0, 0, 0, time.UTC)
	if _, err := pool.Exec(ctx, `INSERT INTO scans (id, workspace_id, link_id, occurred_at, device, os, browser, bot, visitor_hash, country, source, xid)
		SELECT gen_random_uuid(), $1, ($2::uuid[])[1 + i % 2], $3::timestamptz + i * interval '11 minutes', 'mobile', 'iOS', 'Safari', i % 10 = 0,
		       decode(lpad((i % 7)::text, 32, '0'), 'hex'), (ARRAY['DE', 'IN', 'NP', NULL])[1 + i % 4], CASE WHEN i % 3 = 0 THEN 'qr' ELSE 'link' END, NULL
		FROM generate_series(1, 600) i`, ws, links, start); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `SELECT rebuild_scan_rollups(NULL)`); err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, pool, testkit.Logger(t)); err != nil {
		t.Fatal(err)
	}
	var differ, misplaced int
	if err := pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM (SELECT workspace_id, dim, hour, key, sum(scans) AS scans FROM scan_rollup_keys_hourly WHERE dim IN ('c', 's') GROUP BY 1, 2, 3, 4) k
		 FULL JOIN scan_workspace_hours h USING (workspace_id, dim, hour, key) WHERE h.scans IS DISTINCT FROM k.scans),
		(SELECT count(*) FROM scan_workspace_hours WHERE scans_15 <> scans OR scans_30 <> scans OR scans_45 <> scans)`).Scan(&differ, &misplaced); err != nil {
		t.Fatal(err)
	}
	if differ != 0 || misplaced != 0 {
		t.Errorf("%d hours differ from the hourly breakdowns, %d not in their first quarter", differ, misplaced)
	}
	reports := analytics.NewReports(store.NewDB(pool), analytics.DefaultLimits())
	overviewIn := func(name string) (analytics.Overview, analytics.Overview) {
		t.Helper()
		zone := tz.MustParse(name)
		from := analytics.Day.TruncateIn(start, zone.Location())
		to := from.AddDate(0, 0, 6)
		got, err := reports.Overview(ctx, ws, from, to, zone)
		if err != nil {
			t.Fatal(err)
		}
		return got, overviewReference(t, pool, ws, from, to, zone)
	}
	for _, name := range []string{"UTC", "America/New_York", "Europe/Berlin"} {
		if got, want := overviewIn(name); !sameOverview(got, want) || got.Total != 540 {
			t.Errorf("%s, as migrated:\n got  %+v\n want %+v", name, got, want)
		}
	}
	if _, err := scan.RebuildRollups(ctx, store.NewDB(pool), nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"UTC", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu"} {
		if got, want := overviewIn(name); !sameOverview(got, want) || got.Total != 540 {
			t.Errorf("%s, rebuilt:\n got  %+v\n want %+v", name, got, want)
		}
	}
}
