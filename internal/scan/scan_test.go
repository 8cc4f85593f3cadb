package scan_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/geo"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/notify"
	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

func TestMain(m *testing.M) { testkit.Main(m) }

const (
	iPhone    = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
	googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
)

var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func redirectOnce(t *testing.T, method, url, ua, referer string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	req.Header.Set("User-Agent", ua)
	if referer != "" {
		req.Header.Set("Referer", referer)
	}
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

type fixture struct {
	srv          *testkit.Server
	token, other string
	link         map[string]any
}

func newFixture(t *testing.T) *fixture {
	srv := testkit.StartServer(t)
	tn, on := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	f := &fixture{srv: srv, token: srv.APIKey(t, tn.WorkspaceID), other: srv.APIKey(t, on.WorkspaceID)}
	f.link = testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", f.token, `{"target_url":"https://example.com/t"}`), 201)
	return f
}

func (f *fixture) get(t *testing.T) map[string]any {
	t.Helper()
	return testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links/"+f.link["id"].(string), f.token, ""), 200)
}

func TestBurstThenDrainLosesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const n = 300
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for i := range n {
		wg.Go(func() {
			if redirectOnce(t, "GET", f.link["short_url"].(string), iPhone, fmt.Sprintf("https://ref%d.example/x", i%3)) == 302 {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if ok != n {
		t.Fatalf("%d of %d redirects succeeded", ok, n)
	}
	// Shutting the workers down drains the buffer: afterwards every scan is in the database.
	f.srv.App.StopWorkers()
	var rows, count int64
	if err := f.srv.Pool.QueryRow(context.Background(), "SELECT (SELECT count(*) FROM scans), (SELECT scan_count FROM links)").Scan(&rows, &count); err != nil {
		t.Fatal(err)
	}
	if rows != n || count != n {
		t.Errorf("%d scan rows and scan_count %d after %d redirects", rows, count, n)
	}
}

func TestScansAreRecordedAndListed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	url := f.link["short_url"].(string)
	redirectOnce(t, "GET", url, iPhone, "https://News.Example.com:8443/story?id=1")
	redirectOnce(t, "GET", url, googlebot, "")
	redirectOnce(t, "HEAD", url, iPhone, "") // HEAD records nothing
	// Scans are written in batches: wait until both are listed.
	var l, list map[string]any
	wait.Until(t, 5*time.Second, func() (bool, string) {
		l = f.get(t)
		list = testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links/"+l["id"].(string)+"/scans", f.token, ""), 200)
		return len(list["data"].([]any)) == 2, fmt.Sprintf("scans listed: %v", list["data"])
	})
	// Drain the buffer, so nothing else (the HEAD) can still arrive.
	f.srv.App.StopWorkers()
	l = f.get(t)
	list = testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/links/"+l["id"].(string)+"/scans", f.token, ""), 200)
	if l["scan_count"] != float64(1) || l["last_scanned_at"] == nil {
		t.Errorf("scan_count %v, last_scanned_at %v: only the human scan counts", l["scan_count"], l["last_scanned_at"])
	}
	data := list["data"].([]any)
	if len(data) != 2 {
		t.Fatalf("scans after draining: %v (the HEAD must record nothing)", data)
	}
	bot, human := data[0].(map[string]any), data[1].(map[string]any)
	if bot["bot"] != true || bot["device"] != "bot" || bot["referrer_host"] != nil {
		t.Errorf("bot scan %v", bot)
	}
	want := map[string]any{"object": "scan", "link_id": l["id"], "referrer_host": "news.example.com", "device": "mobile", "os": "iOS", "browser": "Safari", "bot": false}
	for k, v := range want {
		if human[k] != v {
			t.Errorf("human scan %s = %v, want %v", k, human[k], v)
		}
	}
	if _, ok := human["visitor_hash"]; ok {
		t.Error("the visitor hash must not be exposed")
	}
	// The raw IP is stored nowhere.
	var leaked bool
	if err := f.srv.Pool.QueryRow(context.Background(), "SELECT EXISTS (SELECT 1 FROM scans WHERE position('127.0.0.1' IN row(scans.*)::text) > 0)").Scan(&leaked); err != nil || leaked {
		t.Errorf("IP address found in scans: %v %v", leaked, err)
	}
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links/"+l["id"].(string)+"/scans", f.other, ""), 404, "not-found")
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links/lnk_nope/scans", f.token, ""), 404, "not-found")
	readOnly := f.srv.APIKey(t, uuidOf(t, l["workspace_id"].(string)), "links:read")
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/links/"+l["id"].(string)+"/scans", readOnly, ""), 403, "insufficient-scope")
}

func uuidOf(t *testing.T, ws string) uuid.UUID {
	wsID, ok := id.Parse(id.Workspace, ws)
	if !ok {
		t.Fatalf("bad workspace id %q", ws)
	}
	return wsID
}

func TestGoneLinksRecordNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/links/"+f.link["id"].(string), f.token, `{"status":"paused"}`), 200)
	if s := redirectOnce(t, "GET", f.link["short_url"].(string), iPhone, ""); s != 410 {
		t.Fatalf("paused link: %d", s)
	}
	f.srv.App.StopWorkers()
	var rows int
	if err := f.srv.Pool.QueryRow(context.Background(), "SELECT count(*) FROM scans").Scan(&rows); err != nil || rows != 0 {
		t.Errorf("%d scans recorded for a 410, %v", rows, err)
	}
}

// subscribed is a Subscriptions that reports one workspace as subscribed.
type subscribed struct{ ws uuid.UUID }

func (s subscribed) Subscribed(_ context.Context, ws uuid.UUID, t event.Type) (bool, error) {
	return ws == s.ws && t == event.ScanCreated, nil
}

func TestRecorderWritesEventsForSubscribedWorkspacesOnly(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	a, b := testkit.NewTenant(t, pool), testkit.NewTenant(t, pool)
	linkA, linkB := insertLink(t, pool, a.WorkspaceID, "codeA"), insertLink(t, pool, b.WorkspaceID, "codeB")
	hasher, _ := analytics.NewVisitorHasher(make([]byte, 32))
	rec := scan.NewRecorder(scan.Options{DB: store.NewDB(pool), Log: slog.New(slog.DiscardHandler), Hasher: hasher, Origins: link.Origins{ShortBase: "https://s.example"}, Subscriptions: subscribed{ws: a.WorkspaceID}})

	go rec.Run()
	now := time.Now()
	for _, h := range []scan.Hit{
		{LinkID: linkA, WorkspaceID: a.WorkspaceID, At: now, UserAgent: iPhone, ClientIP: netip.MustParseAddr("203.0.113.7"), Country: geo.Country{'D', 'E'}, QR: true},
		{LinkID: linkA, WorkspaceID: a.WorkspaceID, At: now, UserAgent: googlebot},
		{LinkID: linkB, WorkspaceID: b.WorkspaceID, At: now, UserAgent: iPhone},
	} {
		if err := rec.Record(context.Background(), h); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(context.Background(), "SELECT workspace_id, type, data->'scan'->>'bot', data->'link'->>'scan_count', data->'link'->>'short_url' FROM events")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var ws uuid.UUID
		var typ, bot, count, short string
		if err := rows.Scan(&ws, &typ, &bot, &count, &short); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%v %s bot=%s count=%s %s", ws == a.WorkspaceID, typ, bot, count, short))
	}
	// The event's link is as of the last fold, which has not seen this scan.
	if len(got) != 1 || got[0] != "true scan.created bot=false count=0 https://s.example/codeA" {
		t.Errorf("events %v, want one scan.created for the human scan of the subscribed workspace", got)
	}
	// The payload holds the contract's objects: wire IDs, every field present.
	var data map[string]map[string]any
	if err := pool.QueryRow(context.Background(), "SELECT data FROM events").Scan(&data); err != nil {
		t.Fatal(err)
	}
	sc, l := data["scan"], data["link"]
	if keys := strings.Join(slices.Sorted(maps.Keys(sc)), ","); keys != "bot,browser,country,device,id,link_id,object,occurred_at,os,referrer_host,source,variant" {
		t.Errorf("scan object keys %s", keys)
	}
	if sc["country"] != "DE" || sc["source"] != "qr" {
		t.Errorf("scan.created's scan has country %v and source %v, want DE and qr", sc["country"], sc["source"])
	}
	// The event's occurred_at is the stored one (microseconds), as the scans list says it.
	var stored time.Time
	if err := pool.QueryRow(context.Background(), "SELECT occurred_at FROM scans WHERE NOT bot AND link_id = $1", linkA).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if at, err := time.Parse(time.RFC3339Nano, sc["occurred_at"].(string)); err != nil || !at.Equal(stored) {
		t.Errorf("scan.created occurred_at %v, stored %v", sc["occurred_at"], stored)
	}
	if !strings.HasPrefix(sc["id"].(string), "scn_") || sc["link_id"] != id.Format(id.Link, linkA) || sc["object"] != "scan" ||
		l["id"] != id.Format(id.Link, linkA) || l["workspace_id"] != id.Format(id.Workspace, a.WorkspaceID) || l["code"] != "codeA" {
		t.Errorf("event data %v", data)
	}
	if err := rec.Record(context.Background(), scan.Hit{}); err != scan.ErrClosed {
		t.Errorf("Record after Close: %v", err)
	}
}

func insertLink(t *testing.T, pool *pgxpool.Pool, ws uuid.UUID, code string) uuid.UUID {
	t.Helper()
	return testkit.Link(t, pool, &testkit.LinkOpts{WorkspaceID: ws, Code: code})
}

func newRecorder(pool *pgxpool.Pool, size int) *scan.Recorder {
	hasher, _ := analytics.NewVisitorHasher(make([]byte, 32))
	return scan.NewRecorder(scan.Options{DB: store.NewDB(pool), Log: slog.New(slog.DiscardHandler), Hasher: hasher, BufferSize: size})
}

func TestFullBufferWaitsInsteadOfDropping(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	tn := testkit.NewTenant(t, pool)
	hit := scan.Hit{LinkID: insertLink(t, pool, tn.WorkspaceID, "full1"), WorkspaceID: tn.WorkspaceID, At: time.Now(), UserAgent: iPhone}
	rec := newRecorder(pool, 1) // not running yet: nothing drains the buffer
	if err := rec.Record(context.Background(), hit); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := rec.Record(ctx, hit); err != context.DeadlineExceeded {
		t.Fatalf("Record on a full buffer: %v, want it to wait until the deadline", err)
	}
	accepted := make(chan error, 1)
	go func() { accepted <- rec.Record(context.Background(), hit) }()
	go rec.Run()
	if err := <-accepted; err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The link's scan_count counts the scans once the fold passed them;
	// a service that serves links from memory (subscribed) hears the
	// fold's counts notification: the link it cached at 0 scans reads 2.
	links := link.NewService(store.NewDB(pool), link.Origins{ShortBase: "https://s.example"}, nil, nil)
	listener := notify.New(pool, slog.New(slog.DiscardHandler))
	links.Subscribe(listener)
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	go listener.Run(ctx)
	<-listener.Ready()
	if l, err := links.Get(ctx, tn.WorkspaceID, hit.LinkID); err != nil || l.ScanCount != 0 {
		t.Errorf("before the fold: scan_count %d (%v), want 0", l.ScanCount, err)
	}
	if f, err := scan.Fold(ctx, store.NewDB(pool)); err != nil || f.Scans != 2 {
		t.Fatalf("fold: %+v, %v", f, err)
	}
	wait.Until(t, 10*time.Second, func() (bool, string) {
		got, err := links.Get(ctx, tn.WorkspaceID, hit.LinkID)
		saw := fmt.Sprintf("scan_count %d, last scanned %v (%v)", got.ScanCount, got.LastScannedAt, err)
		return err == nil && got.ScanCount == 2 && got.LastScannedAt != nil && got.LastScannedAt.Equal(hit.At.Truncate(time.Microsecond)), saw
	})
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT scan_count FROM links").Scan(&n); err != nil || n != 2 {
		t.Errorf("stored scan_count %d (%v) after the fold, want 2", n, err)
	}
}

func TestDatabaseFailureIsRetried(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	tn := testkit.NewTenant(t, pool)
	link := insertLink(t, pool, tn.WorkspaceID, "retry1")
	// Make writes fail: the scans table is gone for a while.
	if _, err := pool.Exec(context.Background(), "ALTER TABLE scans RENAME TO scans_away"); err != nil {
		t.Fatal(err)
	}
	failed := make(chan struct{}, 100)
	hasher, _ := analytics.NewVisitorHasher(make([]byte, 32))
	rec := scan.NewRecorder(scan.Options{DB: store.NewDB(pool), Log: slog.New(slog.DiscardHandler), Hasher: hasher,
		OnFlushError: func(error) { failed <- struct{}{} }})
	go rec.Run()
	for range 5 {
		if err := rec.Record(context.Background(), scan.Hit{LinkID: link, WorkspaceID: tn.WorkspaceID, At: time.Now(), UserAgent: iPhone}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-failed:
	case <-time.After(10 * time.Second):
		t.Fatal("the write never failed")
	}
	if _, err := pool.Exec(context.Background(), "ALTER TABLE scans_away RENAME TO scans"); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := scan.Fold(context.Background(), store.NewDB(pool)); err != nil {
		t.Fatal(err)
	}
	var rows, count int
	if err := pool.QueryRow(context.Background(), "SELECT (SELECT count(*) FROM scans), (SELECT scan_count FROM links)").Scan(&rows, &count); err != nil || rows != 5 || count != 5 {
		t.Errorf("%d rows, scan_count %d (%v), want 5 and 5", rows, count, err)
	}
}

// The folder folds every interval after the last fold began, and while the
// process is saturated only once the saturated interval has passed since
// it ended: a fold that took 41 s under load (the bench's fold of 400,000
// distinct visitors) is not followed by another at once while the load
// goes on.
func TestFoldDueYieldsWhileSaturated(t *testing.T) {
	const interval, saturated = 5 * time.Second, 30 * time.Second
	for _, c := range []struct {
		began, ended time.Duration // since the last fold began, ended
		busy         bool
		want         bool
	}{
		{4 * time.Second, 3 * time.Second, false, false},
		{5 * time.Second, 4 * time.Second, false, true},
		{5 * time.Second, 4 * time.Second, true, false},
		{29 * time.Second, 28 * time.Second, true, false},
		{30 * time.Second, 30 * time.Second, true, true},
		{31 * time.Second, 30 * time.Second, false, true},
		{45 * time.Second, 4 * time.Second, false, true}, // a long fold: the next follows at once
		{45 * time.Second, 4 * time.Second, true, false}, // unless the process is busy
		{70 * time.Second, 30 * time.Second, true, true},
	} {
		if got := scan.FoldDue(c.began, c.ended, interval, saturated, c.busy); got != c.want {
			t.Errorf("%v since the last fold began, %v since it ended, busy %v: due %v, want %v", c.began, c.ended, c.busy, got, c.want)
		}
	}
}

// While writes fail, hits are kept in the outage buffer up to its bound and
// the oldest beyond it are dropped and counted; no Record waits; once
// writes succeed again, everything kept is written.
func TestOutageBufferDropsTheOldestPastItsBound(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	tn := testkit.NewTenant(t, pool)
	link := insertLink(t, pool, tn.WorkspaceID, "outage1")
	if _, err := pool.Exec(context.Background(), "ALTER TABLE scans RENAME TO scans_away"); err != nil {
		t.Fatal(err)
	}
	const bound, first, more = 10, 10, 15
	var dropped atomic.Int64
	hasher, _ := analytics.NewVisitorHasher(make([]byte, 32))
	rec := scan.NewRecorder(scan.Options{DB: store.NewDB(pool), Log: slog.New(slog.DiscardHandler), Hasher: hasher,
		// One writer: with two, batches reach the outage buffer in the
		// order their writes failed, which may swap two neighbouring ones.
		BufferSize: 4, Writers: 1, OutageBufferSize: bound, OnDropped: func(n int) { dropped.Add(int64(n)) }})
	go rec.Run()
	record := func(from, n int) {
		for i := from; i < from+n; i++ {
			// A full buffer would make Record wait: the deadline fails
			// the test if the outage still applied backpressure.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := rec.Record(ctx, scan.Hit{LinkID: link, WorkspaceID: tn.WorkspaceID, At: time.Now(), UserAgent: iPhone, Referer: fmt.Sprintf("https://r%d.example/", i)})
			cancel()
			if err != nil {
				t.Fatalf("Record %d during the outage: %v", i, err)
			}
		}
	}
	record(0, first)
	waitUntil(t, "the first hits kept", func() bool { return rec.OutageDepth() == first })
	record(first, more)
	waitUntil(t, "the oldest dropped", func() bool { return dropped.Load() == first+more-bound && rec.OutageDepth() == bound })

	if _, err := pool.Exec(context.Background(), "ALTER TABLE scans_away RENAME TO scans"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the outage buffer written", func() bool { return rec.OutageDepth() == 0 })
	if err := rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var hosts []string
	rows, _ := pool.Query(context.Background(), "SELECT referrer_host FROM scans ORDER BY referrer_host")
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, h)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := first + more - bound; i < first+more; i++ {
		want = append(want, fmt.Sprintf("r%d.example", i))
	}
	slices.Sort(want)
	if !slices.Equal(hosts, want) {
		t.Errorf("written %v, want the newest %d: %v", hosts, bound, want)
	}
	if n := dropped.Load(); n != first+more-bound {
		t.Errorf("dropped %d, want %d", n, first+more-bound)
	}
}

// waitUntil is wait.For, failing after 20 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	wait.For(t, 20*time.Second, cond, what)
}

// A stop while writes fail waits until its deadline, then gives up and
// says, loudly, how many accepted scans were not written.
func TestCloseDuringOutageCountsTheLostScans(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	tn := testkit.NewTenant(t, pool)
	link := insertLink(t, pool, tn.WorkspaceID, "lost1")
	if _, err := pool.Exec(context.Background(), "ALTER TABLE scans RENAME TO scans_away"); err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logged.Write(p)
	}), nil))
	hasher, _ := analytics.NewVisitorHasher(make([]byte, 32))
	rec := scan.NewRecorder(scan.Options{DB: store.NewDB(pool), Log: log, Hasher: hasher})
	go rec.Run()
	for range 7 {
		if err := rec.Record(context.Background(), scan.Hit{LinkID: link, WorkspaceID: tn.WorkspaceID, At: time.Now(), UserAgent: iPhone}); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "the scans in the outage buffer", func() bool { return rec.OutageDepth() == 7 })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := rec.Close(ctx)
	if err == nil || !strings.Contains(err.Error(), "7 scans not written") {
		t.Errorf("Close: %v, want it to count 7 scans not written", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logged.String(), "level=ERROR msg=\"SCANS LOST") || !strings.Contains(logged.String(), "count=7") {
		t.Errorf("log lacks the loss:\n%s", logged.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestRedirectWaitingAtTheBoundHurriesTheWriters: the writers gather a
// batch that is not full for a while (here an hour); a redirect that
// waits at the crash bound makes them write what they hold at once, so it
// waits for one write, not for the batch to fill or its time to pass.
func TestRedirectWaitingAtTheBoundHurriesTheWriters(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	tn := testkit.NewTenant(t, pool)
	hit := scan.Hit{LinkID: insertLink(t, pool, tn.WorkspaceID, "hurry1"), WorkspaceID: tn.WorkspaceID, At: time.Now(), UserAgent: iPhone}
	rec := newRecorder(pool, 0)
	scan.SetFlushEvery(rec, time.Hour)
	go rec.Run()
	// A quiet recorder admits scan.MinUnwritten unwritten hits.
	for range scan.MinUnwritten {
		if err := rec.Record(context.Background(), hit); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := rec.Backpressure(); n != 0 {
		t.Fatalf("%d hits waited below the bound", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rec.Record(ctx, hit); err != nil {
		t.Fatalf("the hit past the bound: %v (the writers did not write the batch they held)", err)
	}
	if n, d := rec.Backpressure(); n != 1 || d <= 0 {
		t.Errorf("backpressure: %d waits, %v waited; want the one hit past the bound", n, d)
	}
	if err := rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM scans WHERE link_id = $1", hit.LinkID).Scan(&rows); err != nil || rows != scan.MinUnwritten+1 {
		t.Errorf("%d scans written (%v), want %d", rows, err, scan.MinUnwritten+1)
	}
}

// TestFlushedReportsEachBatch: OnFlushed gets every written batch's human
// and bot scans, how long its write took, and how long its oldest scan had
// been answered when it committed (answered 200 ms ago here, so at least
// that; the write itself is timed within it).
func TestFlushedReportsEachBatch(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	tn := testkit.NewTenant(t, pool)
	linkID := insertLink(t, pool, tn.WorkspaceID, "flushed1")
	hasher, _ := analytics.NewVisitorHasher(make([]byte, 32))
	var mu sync.Mutex
	var got []scan.Flushed
	rec := scan.NewRecorder(scan.Options{DB: store.NewDB(pool), Log: slog.New(slog.DiscardHandler), Hasher: hasher,
		OnFlushed: func(f scan.Flushed) { mu.Lock(); got = append(got, f); mu.Unlock() }})
	answered := time.Now().Add(-200 * time.Millisecond)
	for i, ua := range []string{iPhone, googlebot, iPhone} {
		if err := rec.Record(context.Background(), scan.Hit{LinkID: linkID, WorkspaceID: tn.WorkspaceID, At: answered.Add(time.Duration(i) * time.Millisecond), UserAgent: ua}); err != nil {
			t.Fatal(err)
		}
	}
	go rec.Run()
	if err := rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var human, bots int
	for _, f := range got {
		human, bots = human+f.Human, bots+f.Bots
		if f.Took <= 0 || f.Oldest < 200*time.Millisecond || f.Oldest < f.Took {
			t.Errorf("batch reported as %+v: want a write time, and the oldest scan at least 200ms old and older than the write", f)
		}
	}
	if human != 2 || bots != 1 {
		t.Errorf("reported %d human and %d bot scans, want 2 and 1", human, bots)
	}
}
