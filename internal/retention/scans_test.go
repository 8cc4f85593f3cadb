package retention_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/retention"
	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

// TestScansPastRetentionGoRollupsStay: workspace A keeps the default 13
// months, B 3. Partitions that end before A's cutoff (the longest) are
// dropped whole, except one that still holds a scan the fold has not
// passed; B's older scans are deleted in batches, A's in the same months
// stay. The rollups, every link's scan_count and the analytics reports —
// of the kept range and of the purged one — are the same before the
// purge, after it, and after a full rebuild.
func TestScansPastRetentionGoRollupsStay(t *testing.T) {
	t.Parallel()
	p, pool, now := setup(t)
	ctx := context.Background()
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	monthsAgo := func(n int) time.Time { return month.AddDate(0, -n, 0) }
	exec(t, pool, `SELECT ensure_scan_partitions($1, 17)`, monthsAgo(16))

	a, b := testkit.NewTenant(t, pool), testkit.NewTenant(t, pool)
	exec(t, pool, `UPDATE workspaces SET scan_retention_months = 3 WHERE id = $1`, b.WorkspaceID)
	la := testkit.Link(t, pool, &testkit.LinkOpts{WorkspaceID: a.WorkspaceID})
	lb := testkit.Link(t, pool, &testkit.LinkOpts{WorkspaceID: b.WorkspaceID})
	// Ten bulk-loaded scans (no xid) a month in each of the last 16 months,
	// and 30 more of B's five months ago.
	seed := func(ws, link uuid.UUID, from time.Time, n int, step time.Duration) {
		exec(t, pool, `INSERT INTO scans (id, workspace_id, link_id, occurred_at, referrer_host, device, os, browser, bot, visitor_hash, xid)
			SELECT gen_random_uuid(), $1, $2, $3::timestamptz + i * $5::interval,
			       CASE WHEN i % 3 = 0 THEN 'news.example' END, (ARRAY['mobile','desktop','tablet'])[1 + i % 3],
			       (ARRAY['iOS','Android'])[1 + i % 2], 'Safari', i % 7 = 6, decode(md5(i::text || $3::text), 'hex'), NULL
			FROM generate_series(0, $4 - 1) i`, ws, link, from, n, step)
	}
	for m := 16; m >= 1; m-- {
		seed(a.WorkspaceID, la, monthsAgo(m).Add(36*time.Hour), 10, 25*time.Hour)
		seed(b.WorkspaceID, lb, monthsAgo(m).Add(60*time.Hour), 10, 23*time.Hour)
	}
	seed(b.WorkspaceID, lb, monthsAgo(5).Add(time.Hour), 30, time.Hour)
	if _, err := scan.RebuildRollups(ctx, store.NewDB(pool), nil); err != nil {
		t.Fatal(err)
	}
	// A scan the fold has not passed (written by a transaction after the
	// watermark) in A's month 15 months ago: its partition must stay.
	exec(t, pool, `INSERT INTO scans (id, workspace_id, link_id, occurred_at, device, os, browser, bot, visitor_hash)
		VALUES (gen_random_uuid(), $1, $2, $3, 'mobile', 'iOS', 'Safari', false, '\x01')`, a.WorkspaceID, la, monthsAgo(15).Add(time.Hour))

	reports := func() map[string]analytics.Report {
		out := map[string]analytics.Report{}
		for name, q := range map[string]struct {
			ws, link uuid.UUID
			from, to time.Time
		}{
			"A kept":   {a.WorkspaceID, la, monthsAgo(13), month.AddDate(0, 1, 0)},
			"A purged": {a.WorkspaceID, la, monthsAgo(16), monthsAgo(13)},
			"B kept":   {b.WorkspaceID, lb, monthsAgo(3), month.AddDate(0, 1, 0)},
			"B purged": {b.WorkspaceID, lb, monthsAgo(16), monthsAgo(3)},
			"B all":    {b.WorkspaceID, lb, monthsAgo(16), month.AddDate(0, 1, 0)},
		} {
			rep, err := analytics.NewReports(store.NewDB(pool), analytics.DefaultLimits()).Compute(ctx, q.ws, q.link,
				analytics.Range{From: q.from, To: q.to, Interval: analytics.Month})
			if err != nil {
				t.Fatalf("report %s: %v", name, err)
			}
			rep.AsOf = time.Time{}
			out[name] = rep
		}
		return out
	}
	rollups := func() string {
		var s string
		err := pool.QueryRow(ctx, `SELECT concat_ws(' | ',
			(SELECT string_agg(x::text, ',' ORDER BY x::text) FROM scan_rollups x),
			(SELECT string_agg(x::text, ',' ORDER BY x::text) FROM scan_rollup_keys_hourly x),
			(SELECT string_agg(x::text, ',' ORDER BY x::text) FROM scan_rollup_keys_daily x),
			(SELECT string_agg(x::text, ',' ORDER BY x::text) FROM scan_visitor_days x),
			(SELECT string_agg(concat(id, scan_count, last_scanned_at), ',' ORDER BY id) FROM links))`).Scan(&s)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	wantReports, wantRollups := reports(), rollups()
	if wantReports["A purged"].Total == 0 || wantReports["B purged"].Total == 0 {
		t.Fatalf("seeding: the ranges to purge have no scans: %+v", wantReports)
	}

	first := run(t, p, retention.JobScans)
	// Dropped: 16 and 14 months ago (10 + 10 scans each); kept: 15 months
	// ago. Deleted: B's scans before 3 months ago outside those, 140 of
	// them: 100 on the first run (two statements of 50), 40 on the second.
	if first["scans"] != 40+batch*maxBatches {
		t.Errorf("first run purged %d scans, want 40 in dropped partitions and %d deleted", first["scans"], batch*maxBatches)
	}
	if second := run(t, p, retention.JobScans); second["scans"] != 40 {
		t.Errorf("second run purged %d scans, want the remaining 40", second["scans"])
	}
	if third := run(t, p, retention.JobScans); third["scans"] != 0 {
		t.Errorf("third run purged %d scans, want none", third["scans"])
	}
	partitions := map[string]bool{}
	for m := 16; m >= 13; m-- {
		name := "scans_" + monthsAgo(m).Format("2006_01")
		partitions[name] = count(t, pool, `SELECT count(*) FROM pg_class WHERE relname = $1`, name) == 1
	}
	if want := map[string]bool{
		"scans_" + monthsAgo(16).Format("2006_01"): false, "scans_" + monthsAgo(15).Format("2006_01"): true,
		"scans_" + monthsAgo(14).Format("2006_01"): false, "scans_" + monthsAgo(13).Format("2006_01"): true,
	}; !reflect.DeepEqual(partitions, want) {
		t.Errorf("partitions present: %v, want %v", partitions, want)
	}
	for _, c := range []struct {
		name   string
		ws     uuid.UUID
		before bool
		at     time.Time
		want   int64
	}{
		{"A before its cutoff (the partition kept for its unfolded scan)", a.WorkspaceID, true, monthsAgo(13), 11},
		{"A from its cutoff", a.WorkspaceID, false, monthsAgo(13), 130},
		{"B before its cutoff", b.WorkspaceID, true, monthsAgo(3), 0},
		{"B from its cutoff", b.WorkspaceID, false, monthsAgo(3), 30},
	} {
		op := ">="
		if c.before {
			op = "<"
		}
		if n := count(t, pool, `SELECT count(*) FROM scans WHERE workspace_id = $1 AND occurred_at `+op+` $2`, c.ws, c.at); n != c.want {
			t.Errorf("%s: %d scans, want %d", c.name, n, c.want)
		}
	}
	for ws, want := range map[uuid.UUID]time.Time{a.WorkspaceID: monthsAgo(13), b.WorkspaceID: monthsAgo(3)} {
		var got time.Time
		if err := pool.QueryRow(ctx, `SELECT scans_purged_before FROM workspaces WHERE id = $1`, ws).Scan(&got); err != nil || !got.Equal(want) {
			t.Errorf("scans_purged_before = %v, %v; want %v", got, err, want)
		}
	}

	check := func(when string) {
		t.Helper()
		if got := rollups(); got != wantRollups {
			t.Errorf("%s: rollups or scan counts changed", when)
		}
		got := reports()
		for name, want := range wantReports {
			if !reflect.DeepEqual(got[name], want) {
				t.Errorf("%s: report %q changed:\n got  %+v\n want %+v", when, name, got[name], want)
			}
		}
	}
	check("after the purge")
	// The rebuild recomputes from raw scans only after each workspace's
	// horizon: what was purged stays counted.
	if _, err := scan.RebuildRollups(ctx, store.NewDB(pool), nil); err != nil {
		t.Fatal(err)
	}
	check("after a rebuild")
	if n := purgedMetric(t, p, "scans"); n != 180 {
		t.Errorf("linkqr_retention_purged_rows_total{table=scans} = %v, want 180", n)
	}
}
