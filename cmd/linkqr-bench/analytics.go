package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/pgembed"
)

// The analytics scenario: one link with -scans N scans over analyticsDays
// days, written straight into the scans table and then rolled up by
// `linkqr admin analytics rebuild`; then the latency of its analytics by
// every interval over the full range, and the redirect, paced at half of
// the capacity measured in the closed-loop rounds, while analyticsClients
// clients request analytics back to back, next to the same paced redirect
// without them. Below saturation no report may be refused.
const (
	analyticsDays      = 61
	analyticsClients   = 20
	analyticsSamples   = 40
	targetAnalyticsP95 = 50 * time.Millisecond
	// Under load: the redirect at half its measured capacity and 20
	// analytics clients back to back.
	targetLoadedRatio        = 0.9
	targetLoadedAnalyticsP95 = 100 * time.Millisecond
	targetAPIP99Loaded       = 100 * time.Millisecond
	seedChunk                = 1_000_000
)

type queryLatency struct {
	Name    string
	Latency Histogram
	Errors  int
	Sample  string
}

// analyticsReport is what the analytics scenario measured.
type analyticsReport struct {
	Scans                 int64
	SeedTime, RebuildTime time.Duration
	ScanBytes, RollupRows int64
	RollupBytes           int64
	Queries               []*queryLatency
	Unloaded, Loaded      phase
	Hammer                loadResult // analytics requests during the loaded phase
	Refused               uint64     // of which 503 with Retry-After (then honoured)
	Probe                 loadResult // GET /api/v1/links?limit=1, one client, during the loaded phase
	Rate                  float64    // the paced redirect's requests a second (half the capacity)
	Yielded               map[string]float64
}

// analytics runs the scenario against the running linkqr s.
func (b *bench) analytics(ctx context.Context, s *server, fx fixtures, rate float64) (*analyticsReport, error) {
	rep := &analyticsReport{Scans: int64(b.opts.Scans), Rate: rate}
	client := &http.Client{Timeout: 60 * time.Second}
	l, err := createLink(ctx, client, s.url, fx.Tokens[0], "https://example.com/bench/analytics", "")
	if err != nil {
		return nil, err
	}
	conn, closeDB, err := b.benchDB(ctx)
	if err != nil {
		return nil, err
	}
	defer closeDB()

	before, err := storage(ctx, conn)
	if err != nil {
		return nil, err
	}
	end := time.Now().UTC().Truncate(time.Hour)
	start := end.AddDate(0, 0, -analyticsDays)
	b.progress("analytics: seeding %d scans of link %s over %d days (%s to %s)", b.opts.Scans, l.ID, analyticsDays, start.Format(time.DateOnly), end.Format(time.DateOnly))
	t0 := time.Now()
	if err := seedScans(ctx, conn, l.Code, start, end, int64(b.opts.Scans), func(done int64) {
		b.progress("analytics: %d of %d scans written (%v)", done, b.opts.Scans, time.Since(t0).Round(time.Second))
	}); err != nil {
		return nil, err
	}
	rep.SeedTime = time.Since(t0)
	b.progress("analytics: rebuilding the link's rollups with linkqr admin analytics rebuild")
	t0 = time.Now()
	var out map[string]any
	bin, err := filepath.Abs(b.opts.Linkqr)
	if err != nil {
		return nil, err
	}
	env := linkqrEnv(filepath.Join(b.tmp, "data"), strings.TrimPrefix(s.url, "http://"), strings.TrimPrefix(s.metrics, "http://"))
	if err := admin(ctx, bin, env, &out, "analytics", "rebuild", "--link", l.ID); err != nil {
		return nil, err
	}
	rep.RebuildTime = time.Since(t0)
	// After a bulk load, as autovacuum would do a little later: statistics
	// for the planner and a visibility map for index-only scans.
	for _, table := range []string{"scans", "scan_rollups", "scan_rollup_keys_hourly", "scan_rollup_keys_daily", "scan_visitor_days"} {
		if _, err := conn.Exec(ctx, "VACUUM (ANALYZE) "+table); err != nil {
			return nil, fmt.Errorf("vacuum %s: %w", table, err)
		}
	}
	after, err := storage(ctx, conn)
	if err != nil {
		return nil, err
	}
	rep.ScanBytes, rep.RollupBytes, rep.RollupRows = after[0]-before[0], after[1]-before[1], after[2]-before[2]

	base := s.url + "/api/v1/links/" + l.ID + "/analytics"
	// A range, moved back by shift hours: the one-client samples each ask
	// a question of their own, since linkqr answers a past range asked
	// again at the same rollups' version from memory, and these measure
	// computing it.
	spanIn := func(zone string, from, to time.Time, interval string) func(shift int) string {
		return func(shift int) string {
			d := -time.Duration(shift) * time.Hour
			q := url.Values{"from": {from.Add(d).Format(time.RFC3339)}, "to": {to.Add(d).Format(time.RFC3339)}, "interval": {interval}}
			if zone != "" {
				q.Set("timezone", zone)
			}
			return base + "?" + q.Encode()
		}
	}
	span := func(from, to time.Time, interval string) func(shift int) string {
		return spanIn("", from, to, interval)
	}
	// A zone's local midnights: its days' edges, on the hour (New York) or
	// off it (Kolkata +5:30, Kathmandu +5:45).
	localDays := func(zone string) (time.Time, time.Time) {
		loc, _ := time.LoadLocation(zone)
		f, t := start.In(loc), end.In(loc)
		return time.Date(f.Year(), f.Month(), f.Day()+1, 0, 0, 0, 0, loc), time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
	}
	inZone := func(zone string) func(shift int) string {
		from, to := localDays(zone)
		// Shifted by whole days, so the edges stay at local midnights.
		return func(shift int) string {
			return spanIn(zone, from.AddDate(0, 0, -shift), to.AddDate(0, 0, -shift), "day")(0)
		}
	}
	queries := []struct {
		name string
		url  func(shift int) string
	}{
		{"hour, last 31 days", span(end.AddDate(0, 0, -31), end, "hour")},
		{fmt.Sprintf("day, %d days", analyticsDays), span(start, end, "day")},
		{fmt.Sprintf("week, %d days", analyticsDays), span(start, end, "week")},
		{fmt.Sprintf("month, %d days", analyticsDays), span(start, end, "month")},
		// To now, as by default; from moved back per sample, so each is
		// computed (the load mix asks the default range itself).
		{"default (30 days to now)", func(shift int) string {
			if shift == 0 {
				return base
			}
			return base + "?" + url.Values{"from": {end.AddDate(0, 0, -30).Add(-time.Duration(shift) * time.Hour).Format(time.RFC3339)}}.Encode()
		}},
		// Reported, not in the load mix: an edge inside an hour is read from
		// raw scans, at a cost that grows with the link's scans per hour.
		{"day, edges not on the hour", span(start.Add(20*time.Minute), end.Add(-20*time.Minute), "day")},
		// Reported: days in a time zone. New York's midnights are on the UTC
		// hour; Kolkata's and Kathmandu's fall inside one, so their edges and
		// every day's boundary split an hour at its quarter-hour counters.
		{"day in America/New_York", inZone("America/New_York")},
		{"day in Asia/Kolkata", inZone("Asia/Kolkata")},
		{"day in Asia/Kathmandu", inZone("Asia/Kathmandu")},
	}
	hammered := queries[:5]
	for _, q := range queries {
		ql := &queryLatency{Name: q.name}
		for i := range analyticsSamples + 3 {
			t0 := time.Now()
			status, _, err := getStatus(ctx, client, q.url(i), fx.Tokens[0])
			d := time.Since(t0)
			if err != nil || status != http.StatusOK {
				ql.Errors++
				ql.Sample = fmt.Sprintf("status %d, %v", status, err)
				continue
			}
			if i >= 3 { // the first ones warm the caches
				ql.Latency.Record(d)
			}
		}
		b.progress("analytics: %s: p50 %s, p95 %s", q.name, ms(ql.Latency.Percentile(0.5)), ms(ql.Latency.Percentile(0.95)))
		rep.Queries = append(rep.Queries, ql)
	}

	redirect := fx.redirect(s.url)
	b.settle(ctx, "the redirect at half capacity")
	if rep.Unloaded, err = b.loadPaced(ctx, "redirect linkqr at half capacity, no analytics load", redirect, rate, b.opts.Duration); err != nil {
		return nil, err
	}

	// The loaded phase: analytics clients and the API probe run while the
	// redirect load does; what they see from the redirect's warm-up on is
	// recorded.
	b.settle(ctx, "the redirect at half capacity with analytics clients")
	hctx, stopHammer := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for c := range analyticsClients {
		wg.Go(func() {
			var own loadResult
			var refused uint64
			tok := fx.Tokens[c%len(fx.Tokens)]
			for i := c; hctx.Err() == nil; i++ {
				t0 := time.Now()
				status, retryAfter, err := getStatus(hctx, client, hammered[i%len(hammered)].url(0), tok)
				switch {
				case hctx.Err() != nil:
				case status == http.StatusServiceUnavailable && retryAfter > 0:
					refused++ // a well-behaved client waits as told
					select {
					case <-time.After(min(retryAfter, 5*time.Second)):
					case <-hctx.Done():
					}
				case err != nil || status != http.StatusOK:
					own.Errors++
					own.addSample(fmt.Sprintf("analytics: status %d, %v", status, err))
				default:
					own.OK++
					own.Latency.Record(time.Since(t0))
				}
			}
			mu.Lock()
			rep.Hammer.merge(&own)
			rep.Refused += refused
			mu.Unlock()
		})
	}
	wg.Go(func() {
		var own loadResult
		for hctx.Err() == nil {
			t0 := time.Now()
			status, _, err := getStatus(hctx, client, s.url+"/api/v1/links?limit=1", fx.Tokens[len(fx.Tokens)-1])
			switch {
			case hctx.Err() != nil:
			case err != nil || status != http.StatusOK:
				own.Errors++
				own.addSample(fmt.Sprintf("GET /api/v1/links: status %d, %v", status, err))
			default:
				own.OK++
				own.Latency.Record(time.Since(t0))
			}
		}
		mu.Lock()
		rep.Probe.merge(&own)
		mu.Unlock()
	})
	t0 = time.Now()
	yieldBefore := yielded(ctx, s.metrics)
	rep.Loaded, err = b.loadPaced(ctx, fmt.Sprintf("redirect linkqr at half capacity, %d analytics clients", analyticsClients), redirect, rate, b.opts.Duration)
	elapsed := time.Since(t0)
	stopHammer()
	wg.Wait()
	rep.Hammer.Elapsed, rep.Probe.Elapsed = elapsed, elapsed
	rep.Yielded = yieldedSince(ctx, s.metrics, yieldBefore)
	return rep, err
}

// storage returns the bytes of the scans table, the bytes of the rollup
// tables and their rows; the scenario reports what seeding added.
func storage(ctx context.Context, conn *pgx.Conn) ([3]int64, error) {
	var out [3]int64
	err := conn.QueryRow(ctx, `SELECT
		(SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree('scans'))::bigint,
		(SELECT sum(pg_total_relation_size(t))::bigint FROM unnest(ARRAY['scan_rollups', 'scan_rollup_keys_hourly', 'scan_rollup_keys_daily', 'scan_visitor_days']::regclass[]) t),
		(SELECT (SELECT count(*) FROM scan_rollups) + (SELECT count(*) FROM scan_rollup_keys_hourly) + (SELECT count(*) FROM scan_rollup_keys_daily) + (SELECT count(*) FROM scan_visitor_days))`).
		Scan(&out[0], &out[1], &out[2])
	return out, err
}

// seedScans inserts n scans of one link spread evenly over [start, end):
// about 4 % bots, a few devices, systems, browsers and referrer hosts, and
// visitors who come back about three times a day (the visitor hash is
// keyed per day, as the service's is).
func seedScans(ctx context.Context, conn *pgx.Conn, code string, start, end time.Time, n int64, progress func(int64)) error {
	if _, err := conn.Exec(ctx, "SELECT ensure_scan_partitions($1, $2)", start, analyticsDays/28+3); err != nil {
		return err
	}
	perDayVisitors := max(1, n/analyticsDays/3)
	for from := int64(0); from < n; from += seedChunk {
		to := min(n, from+seedChunk) - 1
		_, err := conn.Exec(ctx, `
INSERT INTO scans (id, workspace_id, link_id, occurred_at, referrer_host, device, os, browser, bot, visitor_hash, xid)
SELECT gen_random_uuid(), l.workspace_id, l.id, x.at,
       (ARRAY[NULL, NULL, NULL, 'news.example', 'social.example', 'mail.example', 'search.example', 'blog.example',
              'forum.example', 'chat.example', 'video.example', 'shop.example', 'wiki.example'])[1 + (x.h / 101) % 13],
       CASE WHEN x.bot THEN 'bot' ELSE (ARRAY['mobile', 'mobile', 'mobile', 'desktop', 'tablet', 'other'])[1 + x.h % 6] END,
       (ARRAY['iOS', 'Android', 'Android', 'Windows', 'macOS', 'Linux', 'Other'])[1 + (x.h / 7) % 7],
       CASE WHEN x.bot THEN 'Googlebot' ELSE (ARRAY['Safari', 'Chrome', 'Chrome', 'Firefox', 'Edge', 'Samsung Internet', 'Other'])[1 + (x.h / 31) % 7] END,
       x.bot,
       decode(md5(to_char(x.at AT TIME ZONE 'UTC', 'YYYY-MM-DD') || ':' || ((x.h / 1009) % $6)::text), 'hex'),
       NULL -- bulk-loaded: counted by the rebuild, not by a fold
FROM links l,
     generate_series($2::bigint, $3::bigint) AS i,
     LATERAL (SELECT $4::timestamptz + (i::float8 / $7::float8) * ($5::timestamptz - $4::timestamptz) AS at,
                     (i * 2654435761) % 4294967296 AS h,
                     (i * 2654435761) % 4294967296 % 25 = 0 AS bot) AS x
WHERE l.id = (SELECT id FROM links WHERE code = $1)`,
			code, from, to, start, end, perDayVisitors, n)
		if err != nil {
			return fmt.Errorf("seeding scans: %w", err)
		}
		progress(to + 1)
	}
	return nil
}

// benchDB connects to the running linkqr's embedded PostgreSQL (as the
// admin commands do: sharing the cluster, never owning it).
func (b *bench) benchDB(ctx context.Context) (*pgx.Conn, func(), error) {
	cluster, err := pgembed.Open(ctx, pgembed.Options{DataDir: filepath.Join(b.tmp, "data", "pg"), Mode: pgembed.Attach})
	if err != nil {
		return nil, nil, err
	}
	conn, err := pgx.Connect(ctx, cluster.ConnString())
	if err != nil {
		_ = cluster.Close(context.WithoutCancel(ctx))
		return nil, nil, err
	}
	return conn, func() {
		_ = conn.Close(context.WithoutCancel(ctx))
		_ = cluster.Close(context.WithoutCancel(ctx))
	}, nil
}

// getStatus GETs u with a bearer token and returns the status and
// Retry-After.
func getStatus(ctx context.Context, client *http.Client, u, token string) (int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("User-Agent", chromeUA)
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	return resp.StatusCode, time.Duration(secs) * time.Second, err
}

// print writes the scenario's table; failures go into v.
func (a *analyticsReport) print(w io.Writer, v *verdict) {
	check := func(ok, correctness bool) string {
		if !ok {
			if correctness {
				v.Correct = false
			} else {
				v.Fast = false
			}
		}
		return mark(ok)
	}
	mib := func(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
	perM := func(n int64) string { return mib(int64(float64(n) / float64(max(1, a.Scans)) * 1e6)) }
	fmt.Fprintf(w, "\nanalytics: one link, %d scans over %d days (seeded in %v; rollups rebuilt by `linkqr admin analytics rebuild` in %v)\n",
		a.Scans, analyticsDays, a.SeedTime.Round(time.Millisecond), a.RebuildTime.Round(time.Millisecond))
	fmt.Fprintf(w, "  storage added: scans %s (%s per million), rollups %s in %d rows (%s per million scans)\n",
		mib(a.ScanBytes), perM(a.ScanBytes), mib(a.RollupBytes), a.RollupRows, perM(a.RollupBytes))
	fmt.Fprintf(w, "\n%-34s %10s %10s %8s\n", "GET …/analytics (1 client)", "p50", "p95", "errors")
	// (the load below cycles through the first five)
	for _, q := range a.Queries {
		p95 := q.Latency.Percentile(0.95)
		ok := q.Latency.Count() > 0 && p95 <= targetAnalyticsP95
		fmt.Fprintf(w, "%-34s %10s %10s %8d   target p95 ≤ %s %s\n", q.Name, ms(q.Latency.Percentile(0.5)), ms(p95), q.Errors, ms(targetAnalyticsP95), check(ok, false))
		if q.Errors > 0 {
			fmt.Fprintf(w, "    e.g. %s %s\n", q.Sample, check(false, true))
		}
	}
	fmt.Fprintf(w, "\n%-34s %10s %10s %10s %8s\n", "scenario", "req/s", "p50", "p99", "errors")
	row := func(name string, m *loadResult, errs uint64) {
		fmt.Fprintf(w, "%-34s %10.0f %10s %10s %8d\n", name, m.Throughput(), ms(m.Latency.Percentile(0.5)), ms(m.Latency.Percentile(0.99)), errs)
	}
	fmt.Fprintf(w, "  (the redirect paced at %.0f req/s, half of the capacity measured above; the clients ask the first\n", a.Rate)
	fmt.Fprintf(w, "   five questions above in turn, each answered again from memory until a fold changes the rollups;\n")
	fmt.Fprintf(w, "   the one-client figures above are computed)\n")
	row("redirect, no analytics load", &a.Unloaded.Measured, a.Unloaded.Errors())
	row(fmt.Sprintf("redirect, %d analytics clients", analyticsClients), &a.Loaded.Measured, a.Loaded.Errors())
	row("  analytics answered (200)", &a.Hammer, a.Hammer.Errors)
	fmt.Fprintf(w, "  %-32s %-22s %-18s %s\n", "analytics refused (503)", fmt.Sprintf("%d of %d", a.Refused, a.Refused+a.Hammer.OK), "target 0", check(a.Refused == 0, false))
	fmt.Fprintf(w, "  %-32s %s\n", "yielded (saturated)", formatYielded(a.Yielded))
	hp95 := a.Hammer.Latency.Percentile(0.95)
	fmt.Fprintf(w, "  %-32s %-22s %-18s %s\n", "analytics p95 under load", ms(hp95), "target ≤ "+ms(targetLoadedAnalyticsP95), check(a.Hammer.OK > 0 && hp95 <= targetLoadedAnalyticsP95, false))
	row("  GET /api/v1/links?limit=1", &a.Probe, a.Probe.Errors)
	r := ratio(a.Loaded.Measured.Throughput(), a.Unloaded.Measured.Throughput())
	fmt.Fprintf(w, "  %-32s %-22s %-18s %s\n", "redirect loaded/unloaded", fmt.Sprintf("%.2f", r), fmt.Sprintf("target ≥ %.1f", targetLoadedRatio), check(r >= targetLoadedRatio, false))
	p99 := a.Probe.Latency.Percentile(0.99)
	fmt.Fprintf(w, "  %-32s %-22s %-18s %s\n", "p99 API GET under load", ms(p99), "target ≤ "+ms(targetAPIP99Loaded), check(a.Probe.OK > 0 && p99 <= targetAPIP99Loaded, false))
	errs := a.Unloaded.Errors() + a.Loaded.Errors() + a.Hammer.Errors + a.Probe.Errors
	fmt.Fprintf(w, "  %-32s %-22s %-18s %s\n", "errors (analytics scenario)", fmt.Sprint(errs), "target 0", check(errs == 0, true))
	for _, p := range []*loadResult{&a.Unloaded.Warm, &a.Unloaded.Measured, &a.Loaded.Warm, &a.Loaded.Measured, &a.Hammer, &a.Probe} {
		for _, s := range p.Samples {
			fmt.Fprintf(w, "    e.g. %s\n", s)
		}
	}
}
