package analytics_test

import (
	"context"
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
)

// TestScansBeforeCountriesCountAsUnknownLinkScans: scans and rollups made
// before migration 00028 read as country null and source link after it;
// every range's countries and sources add up to its total, the workspace
// overview holds them, and a rebuild of every link computes exactly what
// the migration filled in.
func TestScansBeforeCountriesCountAsUnknownLinkScans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testkit.DatabaseURL(t, testkit.NewEmptyDatabase(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := store.MigrateUpTo(ctx, pool, testkit.Logger(t), 27); err != nil {
		t.Fatal(err)
	}
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
