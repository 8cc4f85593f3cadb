package analytics_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/strict"
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
	o, err := reports.Overview(ctx, ws1, today.AddDate(0, 0, -29), today.AddDate(0, 0, 1))
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
	o2, err := reports.Overview(ctx, ws2, today.AddDate(0, 0, -6), today.AddDate(0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if o2.Total != 500 || len(o2.TopLinks) != 1 || o2.TopLinks[0].ID != other || fmt.Sprint(o2.Countries) != "[{JP 500}]" || len(o2.Days) != 7 {
		t.Errorf("the other workspace's overview: %+v", o2)
	}

	// A workspace without scans: zeros, every day still there.
	o3, err := reports.Overview(ctx, testkit.NewTenant(t, pool).WorkspaceID, today.AddDate(0, 0, -89), today.AddDate(0, 0, 1))
	if err != nil || o3.Total != 0 || len(o3.Days) != 90 || len(o3.TopLinks) != 0 || len(o3.Countries) != 0 {
		t.Errorf("an empty workspace: %+v, %v", o3, err)
	}
	if _, err := reports.Overview(ctx, ws1, today, today); err == nil {
		t.Error("an empty range was accepted")
	}
}

// TestOverviewAt10000Links: 10,000 links scanned on each of 90 days (the
// largest range the page offers) from 60 countries: the overview reads
// scan_workspace_days alone and answers well within the statement timeout.
func TestOverviewAt10000Links(t *testing.T) {
	t.Parallel()
	strict.SkipShort(t, "900,000 overview rows loaded")
	pool := testkit.DB(t)
	db := store.NewDB(pool)
	ctx := context.Background()
	ws := testkit.NewTenant(t, pool).WorkspaceID
	today := analytics.Day.Truncate(time.Now())
	from := today.AddDate(0, 0, -89)
	// Straight into the overview's table: each link 1 scan a day, link 0
	// one more; countries and sources add up the same.
	if _, err := pool.Exec(ctx, `
		INSERT INTO scan_workspace_days (workspace_id, day, dim, key, scans)
		SELECT $1::uuid, d::date, 'l', (CASE WHEN l = 0 THEN '00000000-0000-0000-0000-000000000001' ELSE md5(l::text)::uuid::text END), 1 + (l = 0)::int
		FROM generate_series($2::timestamptz, $2::timestamptz + interval '89 days', interval '1 day') d, generate_series(0, 9999) l
		ON CONFLICT DO NOTHING`, ws, from); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		INSERT INTO scan_workspace_days (workspace_id, day, dim, key, scans)
		SELECT $1::uuid, d::date, 'c', chr(65 + c / 26) || chr(65 + c % 26), CASE WHEN c = 0 THEN 10001 - 59 * 166 ELSE 166 END
		FROM generate_series($2::timestamptz, $2::timestamptz + interval '89 days', interval '1 day') d, generate_series(0, 59) c
		UNION ALL
		SELECT $1::uuid, d::date, 's', s, CASE WHEN s = 'qr' THEN 4000 ELSE 6001 END
		FROM generate_series($2::timestamptz, $2::timestamptz + interval '89 days', interval '1 day') d, unnest(ARRAY['qr', 'link']) s`, ws, from); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE scan_workspace_days`); err != nil {
		t.Fatal(err)
	}
	reports := analytics.NewReports(db, analytics.DefaultLimits())
	start := time.Now()
	o, err := reports.Overview(ctx, ws, from, today.AddDate(0, 0, 1))
	took := time.Since(start)
	var busy *analytics.BusyError
	if errors.As(err, &busy) {
		t.Fatalf("the overview of 10,000 links × 90 days hit the limits after %v: %v", took, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("overview of 10,000 links × 90 days: %v", took)
	if o.Total != 90*10001 || len(o.Countries) != 60 || len(o.TopLinks) != analytics.OverviewTopLinks || o.TopLinks[0].Scans != 180 || !o.TopLinks[0].Deleted {
		t.Errorf("total %d, %d countries, top %+v", o.Total, len(o.Countries), o.TopLinks[:1])
	}
}
