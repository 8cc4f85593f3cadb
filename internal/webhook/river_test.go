package webhook_test

import (
	"context"
	"crypto/rand"
	"net/netip"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/webhook"
)

const (
	iPhone    = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
	googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
)

// riverClient returns a River client on e's database; working=false makes
// an insert-only client (no workers, never started).
func (e *env) riverClient(t *testing.T, working bool) *river.Client[pgx.Tx] {
	t.Helper()
	cfg := &river.Config{Logger: discard(), TestOnly: true}
	if working {
		workers := river.NewWorkers()
		river.AddWorker(workers, e.svc.Worker())
		cfg.Workers = workers
		cfg.Queues = map[string]river.QueueConfig{webhook.Queue: {MaxWorkers: 4}}
	}
	c, err := river.NewClient(riverpgxv5.New(e.pool), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func start(t testing.TB, c *river.Client[pgx.Tx]) (stop func()) {
	t.Helper()
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			t.Errorf("stop River: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

func (e *env) jobCount(t *testing.T, state string) int {
	t.Helper()
	var n int
	err := e.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM river_job WHERE kind = 'webhook_delivery' AND ($1 = '' OR state::text = $1)`, state).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (e *env) links() *link.Service {
	return link.NewService(e.db, link.Origins{ShortBase: "https://s.example"}, &event.Recorder{Fanout: e.svc.Fanout}, nil)
}

// TestEndToEnd: link and scan events reach a real receiver through a real
// River client, with the documented envelope, data and headers.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	ctx := context.Background()
	client := e.riverClient(t, true)
	e.svc.UseJobs(client)
	start(t, client)
	rcv := newReceiver(t, nil)
	sub := e.create(t, rcv.URL+"/hook", event.LinkCreated, event.LinkUpdated, event.LinkDeleted, event.ScanCreated)
	links := e.links()

	l, err := links.Create(ctx, e.ws, link.CreateInput{TargetURL: mustTarget(t, "https://example.com/old")})
	if err != nil {
		t.Fatal(err)
	}
	linkID := l.ID
	lid := id.Format(id.Link, l.ID)
	if _, err := links.Update(ctx, e.ws, linkID, link.UpdateInput{TargetURL: link.Some(mustTarget(t, "https://example.com/new"))}); err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	hasher, err := analytics.NewVisitorHasher(key)
	if err != nil {
		t.Fatal(err)
	}
	rec := scan.NewRecorder(scan.Options{
		DB: e.db, Log: discard(), Hasher: hasher,
		Subscriptions: e.svc, Events: &event.Recorder{Fanout: e.svc.Fanout},
	})
	go rec.Run()
	for _, ua := range []string{iPhone, googlebot} { // the bot's scan emits nothing
		if err := rec.Record(ctx, scan.Hit{LinkID: linkID, WorkspaceID: e.ws, At: time.Now(), UserAgent: ua, ClientIP: netip.MustParseAddr("192.0.2.7")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := links.Delete(ctx, e.ws, linkID); err != nil {
		t.Fatal(err)
	}
	// Another workspace's events go nowhere.
	if _, err := e.links().Create(ctx, e.other, link.CreateInput{TargetURL: mustTarget(t, "https://example.com/other")}); err != nil {
		t.Fatal(err)
	}

	byType := map[string]map[string]any{}
	for range 4 {
		got := rcv.next(t)
		if err := webhook.Verify(got.body, got.header.Get("Service-Signature"), sub.Secret, webhook.DefaultTolerance, e.clock.Now()); err != nil {
			t.Errorf("signature: %v", err)
		}
		env := decode(t, got.body)
		if got.header.Get("Service-Event-Id") != env["id"] || got.header.Get("Service-Delivery-Attempt") != "1" ||
			got.header.Get("User-Agent") != "linkqr-webhooks/1" || got.header.Get("Content-Type") != "application/json" {
			t.Errorf("headers %v for %s", got.header, env["id"])
		}
		if env["workspace_id"] != id.Format(id.Workspace, e.ws) || env["object"] != "event" {
			t.Errorf("envelope %s", got.body)
		}
		byType[env["type"].(string)] = env["data"].(map[string]any)
	}
	if len(byType) != 4 {
		t.Fatalf("received types %v", byType)
	}
	if lc := byType["link.created"]["link"].(map[string]any); lc["id"] != lid || lc["target_url"] != "https://example.com/old" {
		t.Errorf("link.created data %v", byType["link.created"])
	}
	upd := byType["link.updated"]
	if upd["link"].(map[string]any)["target_url"] != "https://example.com/new" ||
		upd["previous_attributes"].(map[string]any)["target_url"] != "https://example.com/old" {
		t.Errorf("link.updated data %v", upd)
	}
	sc := byType["scan.created"]
	if s := sc["scan"].(map[string]any); s["object"] != "scan" || s["link_id"] != lid || s["bot"] != false || s["device"] != "mobile" {
		t.Errorf("scan.created data.scan %v", sc["scan"])
	}
	// The link is as of the last fold, which has not passed this scan yet.
	if sl := sc["link"].(map[string]any); sl["id"] != lid || sl["scan_count"] != float64(0) {
		t.Errorf("scan.created data.link %v", sc["link"])
	}
	if byType["link.deleted"]["link"].(map[string]any)["id"] != lid {
		t.Errorf("link.deleted data %v", byType["link.deleted"])
	}
	eventually(t, 10*time.Second, "deliveries recorded", func() bool { return len(e.deliveries(t, sub)) == 4 })
	for _, d := range e.deliveries(t, sub) {
		if d.Status != "succeeded" || d.Attempt != 1 {
			t.Errorf("delivery %+v", d)
		}
	}
	var otherJobs int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE args->>'workspace_id' = $1`, e.other.String()).Scan(&otherJobs); err != nil || otherJobs != 0 {
		t.Errorf("%d jobs for the unsubscribed workspace (%v)", otherJobs, err)
	}
	select {
	case extra := <-rcv.got:
		t.Errorf("unexpected extra delivery %s", extra.body)
	default:
	}
}

// TestFanoutIsInTheEventsTransaction: a change that rolls back leaves no
// job; the same change committed leaves one per matching subscription.
func TestFanoutIsInTheEventsTransaction(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	e.svc.UseJobs(e.riverClient(t, false))
	e.create(t, "http://127.0.0.1:9/a", event.LinkCreated)
	e.create(t, "http://127.0.0.1:9/b", event.LinkCreated, event.LinkDeleted)
	e.create(t, "http://127.0.0.1:9/c", event.LinkDeleted) // not for link.created
	links := e.links()

	for _, commit := range []bool{false, true} {
		ctx, amb, err := e.db.BeginAmbient(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer amb.Rollback(ctx) // a no-op after Commit; frees the connection if the test fails
		if _, err := links.Create(ctx, e.ws, link.CreateInput{TargetURL: mustTarget(t, "https://example.com/x")}); err != nil {
			t.Fatal(err)
		}
		if commit {
			// The jobs are rows of this very transaction: visible in it,
			// invisible outside until it commits.
			var inside, outside int
			q := `SELECT count(*) FROM river_job WHERE kind = 'webhook_delivery'`
			if err := amb.Conn().QueryRow(ctx, q).Scan(&inside); err != nil {
				t.Fatal(err)
			}
			if err := e.pool.QueryRow(context.Background(), q).Scan(&outside); err != nil {
				t.Fatal(err)
			}
			if inside != 2 || outside != 0 {
				t.Fatalf("before commit: %d jobs inside the transaction, %d outside; want 2 and 0", inside, outside)
			}
			if err := amb.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		} else {
			amb.Rollback(ctx)
		}
	}
	if n := e.jobCount(t, ""); n != 2 {
		t.Fatalf("%d delivery jobs, want 2 (the rolled-back change enqueues none)", n)
	}
}

// TestPendingDeliveriesSurviveARestart: deliveries queued while no River
// client is working (the service stopped) are delivered by the next one.
func TestPendingDeliveriesSurviveARestart(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	first := e.riverClient(t, true)
	e.svc.UseJobs(first)
	stopFirst := start(t, first)
	rcv := newReceiver(t, nil)
	e.create(t, rcv.URL, event.LinkCreated)
	links := e.links()
	if _, err := links.Create(context.Background(), e.ws, link.CreateInput{TargetURL: mustTarget(t, "https://example.com/before")}); err != nil {
		t.Fatal(err)
	}
	rcv.next(t)
	stopFirst()

	for i := range 3 {
		if _, err := links.Create(context.Background(), e.ws, link.CreateInput{TargetURL: mustTarget(t, "https://example.com/"+string(rune('a'+i)))}); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.jobCount(t, "available"); n != 3 {
		t.Fatalf("%d jobs waiting while stopped, want 3", n)
	}
	select {
	case <-rcv.got:
		t.Fatal("delivered while the service was stopped")
	default:
	}

	start(t, e.riverClient(t, true))
	seen := map[string]bool{}
	for range 3 {
		seen[rcv.next(t).header.Get("Service-Event-Id")] = true
	}
	if len(seen) != 3 {
		t.Fatalf("delivered %d distinct events, want 3", len(seen))
	}
	eventually(t, 10*time.Second, "jobs completed", func() bool { return e.jobCount(t, "completed") == 4 })
}

// TestSubscriptionCacheAcrossInstances: instance B caches "not subscribed"
// (a cache hit needs no database), and learns of A's new subscription and
// of its disabling through NOTIFY within a second.
func TestSubscriptionCacheAcrossInstances(t *testing.T) {
	t.Parallel()
	a, b, _, ctx := twoInstances(t)

	subscribed := func(c context.Context, ws uuid.UUID) (bool, error) {
		return b.svc.Subscribed(c, ws, event.ScanCreated)
	}
	if ok, err := subscribed(ctx, a.ws); ok || err != nil {
		t.Fatalf("before any subscription: %v %v", ok, err)
	}
	dead, kill := context.WithCancel(context.Background())
	kill()
	if ok, err := subscribed(dead, a.ws); ok || err != nil {
		t.Fatalf("a cached answer touched the database: %v %v", ok, err)
	}
	if _, err := subscribed(dead, a.other); err == nil {
		t.Fatal("an uncached workspace answered without the database; the check above proves nothing")
	}

	sub := a.create(t, "http://127.0.0.1:9/h", event.ScanCreated)
	start := time.Now()
	eventually(t, time.Second, "instance B sees the new subscription", func() bool {
		ok, err := subscribed(ctx, a.ws)
		return ok && err == nil
	})
	t.Logf("new subscription visible on the other instance after %s", time.Since(start))

	if _, err := a.svc.Update(context.Background(), a.ws, sub.ID, webhook.UpdateInput{Status: webhook.Some("disabled")}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Second, "instance B sees the subscription disabled", func() bool {
		ok, err := subscribed(ctx, a.ws)
		return !ok && err == nil
	})
}

func mustTarget(t *testing.T, raw string) link.TargetURL {
	t.Helper()
	u, err := link.ParseTargetURL(raw)
	if err != nil {
		t.Fatalf("target %q: %v", raw, err)
	}
	return u
}
