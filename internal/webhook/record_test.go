package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/rivertype"

	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/webhook"
)

// statementCounter is a pgx tracer that counts the statements its pool
// sends (BEGIN and COMMIT included: pgx sends them as statements too).
type statementCounter struct{ n atomic.Int32 }

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// countedPool is a pool on a fresh test database whose statements c counts.
func countedPool(t *testing.T, c *statementCounter) *pgxpool.Pool {
	t.Helper()
	cfg := testkit.DB(t).Config()
	cfg.ConnConfig.Tracer = c
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// TestAttemptStatements: an attempt's own database work is one query that
// reads everything and, on success, one statement that records it; a
// failure adds the transaction that also tracks the subscription's health.
// (It was seven statements either way: subscription, event, attempt
// number, BEGIN, health update, insert, COMMIT.)
func TestAttemptStatements(t *testing.T) {
	t.Parallel()
	var c statementCounter
	e := setup(t, opts{pool: countedPool(t, &c)})
	rcv := newReceiver(t, nil)
	okSub := e.create(t, rcv.URL+"/hook", event.LinkUpdated)
	failing := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) })
	failSub := e.create(t, failing.URL+"/hook", event.LinkUpdated)
	evID := e.recordEvent(t, event.LinkUpdated, map[string]any{"link": map[string]any{"id": "lnk_x"}})

	for _, tc := range []struct {
		name string
		sub  webhook.Resource
		want int32
	}{
		{"success", okSub, 2},        // load, record
		{"failure", failSub, 5},      // load, BEGIN, mark failing, insert, COMMIT
		{"second success", okSub, 2}, // attempt 2 of the same event
	} {
		c.n.Store(0)
		_, err := e.work(t, e.argsFor(t, tc.sub, evID, event.LinkUpdated), 1)
		if (err != nil) != (tc.sub.ID == failSub.ID) {
			t.Fatalf("%s: Work: %v", tc.name, err)
		}
		if got := c.n.Load(); got != tc.want {
			t.Errorf("%s: %d statements, want %d", tc.name, got, tc.want)
		}
	}
	ds := e.deliveries(t, okSub)
	if len(ds) != 2 || ds[0].Attempt != 2 || ds[1].Attempt != 1 || ds[0].Status != "succeeded" {
		t.Fatalf("deliveries of the succeeding subscription: %+v", ds)
	}
	if ds := e.deliveries(t, failSub); len(ds) != 1 || ds[0].Status != "failed" || ds[0].NextAttemptAt == nil {
		t.Fatalf("deliveries of the failing subscription: %+v", ds)
	}
}

// failNextDeliveryInsert makes the next insert into webhook_deliveries
// fail, once, as a full disk or a lost connection would: after the
// receiver has been sent the attempt, before it is recorded.
func (e *env) failNextDeliveryInsert(t *testing.T) {
	t.Helper()
	_, err := e.pool.Exec(context.Background(), `
CREATE SEQUENCE fail_once;
CREATE FUNCTION fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF nextval('fail_once') = 1 THEN RAISE EXCEPTION 'injected: could not record'; END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER fail_once BEFORE INSERT ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION fail_once();`)
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) failingSince(t *testing.T, sub webhook.Resource) *time.Time {
	t.Helper()
	var since *time.Time
	if err := e.pool.QueryRow(context.Background(), `SELECT failing_since FROM webhook_subscriptions WHERE id = $1`, sub.ID).Scan(&since); err != nil {
		t.Fatal(err)
	}
	return since
}

// TestSuccessIsRecordedAtomically: when recording a successful attempt
// fails, nothing of it is recorded (not the row, not the subscription's
// recovery) and the job is retried, not cancelled; the retry records
// exactly one row and clears the failure streak.
func TestSuccessIsRecordedAtomically(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	rcv := newReceiver(t, nil)
	sub := e.create(t, rcv.URL+"/hook", event.LinkCreated)
	since := e.clock.Now().Add(-time.Hour)
	if _, err := e.pool.Exec(context.Background(), `UPDATE webhook_subscriptions SET failing_since = $2 WHERE id = $1`, sub.ID, since); err != nil {
		t.Fatal(err)
	}
	args := e.argsFor(t, sub, e.recordEvent(t, event.LinkCreated, map[string]any{}), event.LinkCreated)
	e.failNextDeliveryInsert(t)

	_, err := e.work(t, args, 1)
	var cancel *rivertype.JobCancelError
	if err == nil || errors.As(err, &cancel) {
		t.Fatalf("Work after a failed record: %v; want an error River retries", err)
	}
	rcv.next(t)
	if ds := e.deliveries(t, sub); len(ds) != 0 {
		t.Fatalf("%d deliveries recorded by the failed record: %+v", len(ds), ds)
	}
	if got := e.failingSince(t, sub); got == nil || !got.Equal(since) {
		t.Fatalf("failing_since %v after the failed record, want %v kept", got, since)
	}
	if e.succeeded.Load() != 0 {
		t.Errorf("OnAttempt counted %d successes of an unrecorded attempt", e.succeeded.Load())
	}

	if _, err := e.work(t, args, 2); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if got := rcv.next(t).header.Get(webhook.HeaderAttempt); got != "1" {
		t.Errorf("the retry was sent as attempt %s; the unrecorded one does not count", got)
	}
	ds := e.deliveries(t, sub)
	if len(ds) != 1 || ds[0].Status != "succeeded" || ds[0].Attempt != 1 {
		t.Fatalf("deliveries after the retry: %+v", ds)
	}
	if got := e.failingSince(t, sub); got != nil {
		t.Errorf("failing_since %v after a recorded success", got)
	}
}

// TestMidAttemptErrorUnderRiver: through a real River client, an attempt
// whose record fails is retried by River and its event ends with exactly
// one recorded delivery and a completed job: neither lost nor recorded
// twice.
func TestMidAttemptErrorUnderRiver(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	// The service's clock runs an hour behind, so the retry River
	// schedules (5 s after it) is due at once.
	e.clock.Advance(-time.Hour)
	client := e.riverClient(t, true)
	e.svc.UseJobs(client)
	start(t, client)
	rcv := newReceiver(t, nil)
	sub := e.create(t, rcv.URL+"/hook", event.LinkCreated)
	e.failNextDeliveryInsert(t)

	if _, err := e.links().Create(context.Background(), e.ws, link.CreateInput{TargetURL: mustTarget(t, "https://example.com/a")}); err != nil {
		t.Fatal(err)
	}
	first, second := rcv.next(t), rcv.next(t)
	if a, b := first.header.Get(webhook.HeaderEventID), second.header.Get(webhook.HeaderEventID); a != b {
		t.Fatalf("two different events %s, %s; want the one event sent again", a, b)
	}
	eventually(t, 10*time.Second, "the job completed", func() bool { return e.jobCount(t, "completed") == 1 })
	if n := e.jobCount(t, ""); n != 1 {
		t.Fatalf("%d delivery jobs, want 1", n)
	}
	ds := e.deliveries(t, sub)
	if len(ds) != 1 || ds[0].Status != "succeeded" {
		t.Fatalf("deliveries: %+v; want exactly one, succeeded", ds)
	}
}
