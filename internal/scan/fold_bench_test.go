package scan_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

// foldBench is a workspace set-up for the fold's benchmarks: 1,000 links
// of 10 workspaces, and windows of foldWindow scans written straight into
// scans as the redirect leaves them (2,000 redirects a second for 2.5 s):
// 2,000 visitors, 60 countries and unknown, both sources, 5 % bots, three
// devices, four referrers; the windows follow one another through the
// hours.
type foldBench struct {
	b        *testing.B
	db       *store.DB
	links    []uuid.UUID
	owners   []uuid.UUID
	clock    time.Time
	scans    int64
	wall     time.Duration // the folds', summed
	self, pg time.Duration
}

const foldWindow = 5000

func newFoldBench(b *testing.B) *foldBench {
	pool := testkit.DB(b)
	f := &foldBench{b: b, db: store.NewDB(pool), clock: time.Now().UTC().Truncate(time.Hour).Add(-48 * time.Hour)}
	f.links, f.owners = tenantLinks(b, pool, 10, 100)
	return f
}

// tenantLinks makes tenants workspaces of each links and returns the
// links and, for each, its workspace.
func tenantLinks(t testing.TB, pool *pgxpool.Pool, tenants, each int) (links, owners []uuid.UUID) {
	t.Helper()
	for range tenants {
		ws := testkit.NewTenant(t, pool).WorkspaceID
		for range each {
			links = append(links, testkit.Link(t, pool, &testkit.LinkOpts{WorkspaceID: ws}))
			owners = append(owners, ws)
		}
	}
	return links, owners
}

// window writes the next window of scans (not timed) and folds it, adding
// the fold's wall time, this process's CPU and the test cluster's
// PostgreSQL CPU to f.
func (f *foldBench) window() {
	f.b.Helper()
	ctx := context.Background()
	pool := f.db.Pool()
	if _, err := pool.Exec(ctx, `
		INSERT INTO scans (id, workspace_id, link_id, occurred_at, referrer_host, device, os, browser, bot, visitor_hash, country, source)
		SELECT gen_random_uuid(), ($1::uuid[])[k], ($2::uuid[])[k], $3::timestamptz + random() * interval '2.5 seconds',
		       (ARRAY[NULL, 'news.example', 'social.example', 'mail.example'])[1 + floor(random() * 4)::int],
		       (ARRAY['mobile', 'desktop', 'tablet'])[1 + v % 3], (ARRAY['iOS', 'Android', 'Windows'])[1 + v % 3],
		       (ARRAY['Safari', 'Chrome', 'Firefox'])[1 + v % 3], random() < 0.05, decode(md5(v::text), 'hex'),
		       CASE WHEN v % 61 = 60 THEN NULL ELSE chr(65 + v % 61 / 26) || chr(65 + v % 61 % 26) END,
		       CASE WHEN random() < 0.3 THEN 'qr' ELSE 'link' END
		FROM (SELECT 1 + floor(random() * cardinality($1::uuid[]))::int AS k, floor(random() * 2000)::int AS v
		      FROM generate_series(1, $4::int)) r`, f.owners, f.links, f.clock, foldWindow); err != nil {
		f.b.Fatal(err)
	}
	f.clock = f.clock.Add(2500 * time.Millisecond)
	self, pg, start := testkit.SelfCPU(), testkit.PostgresCPU(f.b, pool), time.Now()
	folded, err := scan.Fold(ctx, f.db)
	f.wall += time.Since(start)
	f.self += testkit.SelfCPU() - self
	f.pg += testkit.PostgresCPU(f.b, pool) - pg
	if err != nil || folded.Scans == 0 {
		f.b.Fatalf("fold: %+v, %v", folded, err)
	}
	f.scans += foldWindow
}

// report reports f's cost per scan, with suffix after each unit.
func (f *foldBench) report(suffix string) {
	n := float64(f.scans)
	f.b.ReportMetric(float64(f.wall.Nanoseconds())/n, "ns/scan"+suffix)
	f.b.ReportMetric(float64(f.self.Nanoseconds())/n, "go-ns/scan"+suffix)
	f.b.ReportMetric(float64(f.pg.Nanoseconds())/n, "pg-ns/scan"+suffix)
}

// BenchmarkFold is what the fold costs per scan (foldBench's windows, one
// per op): wall time (ns/scan), this process's CPU (go-ns/scan) and the
// test cluster's PostgreSQL CPU (pg-ns/scan); ns/op includes writing the
// window's scans. docs/performance.md compares it across releases.
func BenchmarkFold(b *testing.B) {
	f := newFoldBench(b)
	f.window() // the first window of an hour creates the rows later ones update
	*f = foldBench{b: b, db: f.db, links: f.links, owners: f.owners, clock: f.clock}
	b.ResetTimer()
	for range b.N {
		f.window()
	}
	b.StopTimer()
	f.report("")
}
