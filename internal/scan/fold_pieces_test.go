package scan_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

// rollupTables is every table the fold adds to, each row as text in a
// fixed order.
var rollupTables = map[string]string{
	"scan_rollups":            `SELECT array_agg(r::text ORDER BY link_id, hour) FROM scan_rollups r`,
	"scan_rollup_keys_hourly": `SELECT array_agg(r::text ORDER BY link_id, hour, dim, key) FROM scan_rollup_keys_hourly r`,
	"scan_rollup_keys_daily":  `SELECT array_agg(r::text ORDER BY link_id, day, dim, key) FROM scan_rollup_keys_daily r`,
	"scan_visitor_days":       `SELECT array_agg(r::text ORDER BY link_id, day, visitor_hash) FROM scan_visitor_days r`,
	"scan_workspace_days":     `SELECT array_agg(r::text ORDER BY workspace_id, day, dim, key) FROM scan_workspace_days r`,
	"scan_workspace_hours":    `SELECT array_agg(r::text ORDER BY workspace_id, dim, hour, key) FROM scan_workspace_hours r`,
	"links":                   `SELECT array_agg((id, scan_count, last_scanned_at)::text ORDER BY id) FROM links`,
}

func rollupSnapshot(t *testing.T, pool *pgxpool.Pool) map[string][]string {
	t.Helper()
	snap := map[string][]string{}
	for table, q := range rollupTables {
		var rows []string
		if err := pool.QueryRow(context.Background(), q).Scan(&rows); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		snap[table] = rows
	}
	return snap
}

// TestFoldInPiecesEqualsRebuild folds scans in chunks, takes and upsert
// statements far smaller than their batches (so every boundary is crossed
// many times: a visitor's quarters split between takes, a link's hours
// between statements, hours of one day summed across pieces), in three
// folds that each update what the last one wrote, and checks every rollup
// table against the rebuild from raw scans, an SQL implementation of its
// own (rebuild_scan_rollups).
func TestFoldInPiecesEqualsRebuild(t *testing.T) {
	defer scan.SetFoldPieces(40, 7, 3)()
	pool := testkit.DB(t)
	db := store.NewDB(pool)
	ctx := context.Background()
	links, owners := tenantLinks(t, pool, 2, 4)
	start := time.Date(2026, 3, 9, 22, 0, 0, 0, time.UTC)
	for fold := range 3 {
		// 30 transactions of 20 scans, as the writers leave them: 200
		// visitors (some return across folds, hours and days), three
		// days, bots among them.
		for tx := range 30 {
			if _, err := pool.Exec(ctx, `
				INSERT INTO scans (id, workspace_id, link_id, occurred_at, referrer_host, device, os, browser, bot, visitor_hash, country, source, variant)
				SELECT gen_random_uuid(), ($1::uuid[])[k], ($2::uuid[])[k], $3::timestamptz + (v * 97 + g * 13) % 4000 * interval '1 minute',
				       (ARRAY[NULL, 'news.example', 'mail.example'])[1 + v % 3],
				       (ARRAY['mobile', 'desktop'])[1 + v % 2], (ARRAY['iOS', 'Android', 'Windows'])[1 + v % 3],
				       (ARRAY['Safari', 'Chrome', 'Firefox', 'Edge'])[1 + v % 4], v % 11 = 0, decode(md5(v::text), 'hex'),
				       CASE WHEN v % 7 = 0 THEN NULL ELSE (ARRAY['DE', 'US', 'IN', 'NP'])[1 + v % 4] END,
				       CASE WHEN g % 3 = 0 THEN 'qr' ELSE 'link' END,
				       CASE WHEN v % 5 = 0 THEN 'b' END
				FROM (SELECT g, 1 + (g * 7 + $4::int) % cardinality($1::uuid[]) AS k, (g * 31 + $4::int * 17) % 200 AS v
				      FROM generate_series(1, 20) g) r`, owners, links, start, fold*30+tx); err != nil {
				t.Fatal(err)
			}
		}
		f, err := scan.Fold(ctx, db)
		if err != nil || f.Scans == 0 || f.AsOf.IsZero() {
			t.Fatalf("fold %d: %+v, %v", fold, f, err)
		}
	}
	folded := rollupSnapshot(t, pool)
	if len(folded["scan_rollup_keys_daily"]) < 100 || len(folded["scan_visitor_days"]) < 100 {
		t.Fatalf("too little folded to tell: %d daily rows, %d visitor-days", len(folded["scan_rollup_keys_daily"]), len(folded["scan_visitor_days"]))
	}
	if _, err := scan.RebuildRollups(ctx, db, nil); err != nil {
		t.Fatal(err)
	}
	rebuilt := rollupSnapshot(t, pool)
	for table, want := range rebuilt {
		got := folded[table]
		if len(got) != len(want) {
			t.Errorf("%s: the fold wrote %d rows, the rebuild %d", table, len(got), len(want))
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s row %d:\n folded  %s\n rebuilt %s", table, i, got[i], want[i])
				break
			}
		}
	}
}
