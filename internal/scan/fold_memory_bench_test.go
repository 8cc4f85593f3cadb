package scan_test

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

// BenchmarkFoldChunkMemory is the heap one fold chunk takes when every
// scan is a visitor of its own, as the bench's realistic rounds leave
// them: 50,000 scans (one whole chunk) on 10,000 links, 80 countries,
// eight browsers, twenty referrers, in one quarter-hour. It reports the
// heap's peak above what it was before the fold (peak-heap-MiB, sampled
// every millisecond) and what the fold allocated (alloc-MiB), per op.
func BenchmarkFoldChunkMemory(b *testing.B) {
	pool := testkit.DB(b)
	db := store.NewDB(pool)
	links, owners := tenantLinks(b, pool, 2, 5000)
	ctx := context.Background()
	clock := time.Now().UTC().Truncate(time.Hour).Add(-72 * time.Hour)
	var peak, alloc float64
	for range b.N {
		b.StopTimer()
		if _, err := pool.Exec(ctx, `
			INSERT INTO scans (id, workspace_id, link_id, occurred_at, referrer_host, device, os, browser, bot, visitor_hash, country, source)
			SELECT gen_random_uuid(), ($1::uuid[])[k], ($2::uuid[])[k], $3::timestamptz + random() * interval '14 minutes',
			       CASE WHEN v % 3 = 0 THEN NULL ELSE 'site' || (v % 20) || '.example' END,
			       (ARRAY['mobile', 'desktop', 'tablet'])[1 + v % 3], (ARRAY['iOS', 'Android', 'Windows', 'macOS'])[1 + v % 4],
			       (ARRAY['Safari', 'Chrome', 'Firefox', 'Edge', 'Samsung Internet', 'Mobile Safari', 'Chrome Mobile', 'Opera'])[1 + v % 8],
			       false, decode(md5(random()::text), 'hex'),
			       chr(65 + v % 80 / 26) || chr(65 + v % 80 % 26),
			       CASE WHEN v % 2 = 0 THEN 'qr' ELSE 'link' END
			FROM (SELECT 1 + (g % cardinality($1::uuid[])) AS k, floor(random() * 1000000)::int AS v
			      FROM generate_series(1, $4::int) g) r`, owners, links, clock, 50_000); err != nil {
			b.Fatal(err)
		}
		clock = clock.Add(15 * time.Minute)
		runtime.GC()
		before := heapBytes()
		var high uint64
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		allocBefore := ms.TotalAlloc
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			t := time.NewTicker(time.Millisecond)
			defer t.Stop()
			for {
				high = max(high, heapBytes())
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		})
		b.StartTimer()
		folded, err := scan.Fold(ctx, db)
		b.StopTimer()
		close(stop)
		wg.Wait()
		if err != nil || folded.Scans != 50_000 {
			b.Fatalf("fold: %+v, %v", folded, err)
		}
		runtime.ReadMemStats(&ms)
		peak += float64(high-min(high, before)) / (1 << 20)
		alloc += float64(ms.TotalAlloc-allocBefore) / (1 << 20)
	}
	b.ReportMetric(peak/float64(b.N), "peak-heap-MiB")
	b.ReportMetric(alloc/float64(b.N), "alloc-MiB")
}

// heapBytes is the heap's objects, live and not yet collected.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
