package webhook_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/webhook"
)

// fanOut records events of the test workspace through the service's
// fan-out and returns the delivery jobs it enqueued (inserted with an
// insert-only River client), in order.
func (e *env) fanOut(t *testing.T, typ event.Type, n int) []webhook.DeliverArgs {
	t.Helper()
	insertOnly, err := river.NewClient(riverpgxv5.New(e.pool), &river.Config{Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	jobs := &capture{river: insertOnly}
	e.svc.UseJobs(jobs)
	evs := make([]event.New, n)
	for i := range evs {
		evs[i] = event.New{WorkspaceID: e.ws, Type: typ, Data: map[string]any{"link": map[string]any{"id": "lnk_" + strconv.Itoa(i), "title": "Spring <menu> & more"}}}
	}
	err = e.db.InTx(context.Background(), func(tx pgx.Tx) error {
		_, err := (&event.Recorder{Fanout: e.svc.Fanout}).RecordMany(context.Background(), tx, evs)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]webhook.DeliverArgs, len(jobs.params))
	for i, p := range jobs.params {
		out[i] = p.Args.(webhook.DeliverArgs)
	}
	return out
}

// TestFannedOutAttemptReadsNothing: the fan-out puts the event's body in
// the job, so an attempt of the automatic schedule reads nothing (the
// subscription is cached) and writes one statement; the body is the same
// bytes the event row renders to, which a job without it (a manual retry,
// a job enqueued before) sends; a later attempt's number counts the
// recorded ones.
func TestFannedOutAttemptReadsNothing(t *testing.T) {
	t.Parallel()
	var c statementCounter
	e := setup(t, opts{pool: countedPool(t, &c)})
	rcv := newReceiver(t, nil)
	sub := e.create(t, rcv.URL+"/hook", event.LinkCreated)
	jobs := e.fanOut(t, event.LinkCreated, 1)
	if len(jobs) != 1 || jobs[0].Body == "" || jobs[0].SubscriptionID != sub.ID {
		t.Fatalf("fan-out enqueued %+v", jobs)
	}
	args := jobs[0]

	c.n.Store(0)
	if _, err := e.work(t, args, 1); err != nil {
		t.Fatal(err)
	}
	if got := c.n.Load(); got != 1 {
		t.Errorf("first attempt: %d statements, want 1 (the record)", got)
	}
	first := rcv.next(t)
	if string(first.body) != args.Body || first.header.Get(webhook.HeaderAttempt) != "1" {
		t.Fatalf("sent %s as attempt %s; want the job's body as attempt 1", first.body, first.header.Get(webhook.HeaderAttempt))
	}
	if err := webhook.Verify(first.body, first.header.Get(webhook.HeaderSignature), sub.Secret, webhook.DefaultTolerance, e.clock.Now()); err != nil {
		t.Fatal(err)
	}

	fromRow := args
	fromRow.Body = ""
	if _, err := e.work(t, fromRow, 2); err != nil {
		t.Fatal(err)
	}
	second := rcv.next(t)
	if !bytes.Equal(second.body, first.body) || second.header.Get(webhook.HeaderAttempt) != "2" {
		t.Fatalf("rendered from the row: %s as attempt %s; want\n%s as attempt 2", second.body, second.header.Get(webhook.HeaderAttempt), first.body)
	}

	c.n.Store(0)
	if _, err := e.work(t, args, 3); err != nil {
		t.Fatal(err)
	}
	if got := rcv.next(t).header.Get(webhook.HeaderAttempt); got != "3" {
		t.Errorf("third attempt sent as %s", got)
	}
	if got := c.n.Load(); got != 2 {
		t.Errorf("a later attempt: %d statements, want 2 (its number, the record)", got)
	}
	ds := e.deliveries(t, sub)
	if len(ds) != 3 || ds[0].Attempt != 3 || ds[2].Attempt != 1 || ds[0].Status != "succeeded" || ds[0].RequestSignature == "" {
		t.Fatalf("deliveries: %+v", ds)
	}
	if e.succeeded.Load() != 3 {
		t.Errorf("OnAttempt counted %d successes, want 3", e.succeeded.Load())
	}
}

// TestForgedWorkspaceSendsNothing: a job naming another workspace than
// its subscription's is not served by that workspace's cache and sends
// nothing.
func TestForgedWorkspaceSendsNothing(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	rcv := newReceiver(t, nil)
	e.create(t, rcv.URL, event.LinkCreated)
	args := e.fanOut(t, event.LinkCreated, 1)[0]
	args.WorkspaceID = e.other
	_, err := e.work(t, args, 1)
	var cancel *rivertype.JobCancelError
	if !errors.As(err, &cancel) {
		t.Fatalf("Work: %v; want the job cancelled", err)
	}
	select {
	case g := <-rcv.got:
		t.Fatalf("sent %s", g.body)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestAttemptSeesChangesOfAnotherInstance: instance B sends from its
// cache; when instance A re-points, rotates or disables the subscription,
// B's next attempt after the NOTIFY reached it goes to the new URL, signs
// with the new secret, or is not made.
func TestAttemptSeesChangesOfAnotherInstance(t *testing.T) {
	t.Parallel()
	a, b, l, ctx := twoInstances(t)
	heard := func(since time.Time) {
		t.Helper()
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
		defer wcancel()
		l.Heard(wctx, webhook.ChangedChannel, a.ws.String(), since)
		if wctx.Err() != nil {
			t.Fatal("instance B did not hear the change")
		}
	}

	old, moved := newReceiver(t, nil), newReceiver(t, nil)
	sub := a.create(t, old.URL, event.LinkCreated)
	since := time.Now()
	heard(since.Add(-time.Minute))
	args := b.fanOut(t, event.LinkCreated, 1)[0] // B caches the subscription
	if _, err := b.work(t, args, 1); err != nil {
		t.Fatal(err)
	}
	old.next(t)

	since = time.Now()
	if _, err := a.svc.Update(ctx, a.ws, sub.ID, webhook.UpdateInput{URL: webhook.Some(moved.URL)}); err != nil {
		t.Fatal(err)
	}
	heard(since)
	if _, err := b.work(t, args, 2); err != nil {
		t.Fatal(err)
	}
	moved.next(t)
	select {
	case <-old.got:
		t.Fatal("the old URL received the attempt after the change")
	default:
	}

	since = time.Now()
	rotated, err := a.svc.RotateSecret(ctx, a.ws, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	heard(since)
	if _, err := b.work(t, args, 3); err != nil {
		t.Fatal(err)
	}
	got := moved.next(t)
	if err := webhook.Verify(got.body, got.header.Get(webhook.HeaderSignature), rotated.Secret, webhook.DefaultTolerance, b.clock.Now()); err != nil {
		t.Fatalf("not signed with the rotated secret: %v", err)
	}

	since = time.Now()
	if _, err := a.svc.Update(ctx, a.ws, sub.ID, webhook.UpdateInput{Status: webhook.Some("disabled")}); err != nil {
		t.Fatal(err)
	}
	heard(since)
	_, err = b.work(t, args, 4)
	if !errors.Is(err, webhook.ErrDisabled) {
		t.Fatalf("attempt after the disabling: %v", err)
	}
	select {
	case g := <-moved.got:
		t.Fatalf("a disabled subscription received %s", g.body)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestConcurrentSuccessesAllRecorded: successes recorded together (the
// batcher) are each recorded once, and clear the subscription's failure
// streak.
func TestConcurrentSuccessesAllRecorded(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	var sent atomic.Int32
	rcv := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		sent.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})
	rcv.got = make(chan received, 1000)
	sub := e.create(t, rcv.URL, event.LinkCreated)
	if _, err := e.pool.Exec(context.Background(), `UPDATE webhook_subscriptions SET failing_since = now() - interval '1 hour' WHERE id = $1`, sub.ID); err != nil {
		t.Fatal(err)
	}
	jobs := e.fanOut(t, event.LinkCreated, 200)
	var wg sync.WaitGroup
	errs := make(chan error, len(jobs))
	for _, args := range jobs {
		wg.Go(func() {
			if _, err := e.work(t, args, 1); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var rows, events int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*), count(DISTINCT event_id) FROM webhook_deliveries WHERE subscription_id = $1 AND status = 'succeeded' AND attempt = 1`, sub.ID).Scan(&rows, &events); err != nil {
		t.Fatal(err)
	}
	if rows != 200 || events != 200 || sent.Load() != 200 || e.succeeded.Load() != 200 {
		t.Fatalf("%d rows of %d events recorded, %d sent, %d counted; want 200 each", rows, events, sent.Load(), e.succeeded.Load())
	}
	if got := e.failingSince(t, sub); got != nil {
		t.Errorf("failing_since %v after recorded successes", got)
	}
}

// TestGracefulStopRecordsEverySent: River stopped gracefully while
// deliveries are in flight leaves every attempt that was sent recorded,
// and every completed job with its record; the rest are delivered after
// a restart.
func TestGracefulStopRecordsEverySent(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	var sent atomic.Int32
	rcv := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		sent.Add(1)
		time.Sleep(2 * time.Millisecond)
		w.WriteHeader(http.StatusNoContent)
	})
	rcv.got = make(chan received, 1000)
	e.create(t, rcv.URL, event.LinkCreated)
	const n = 300
	e.fanOut(t, event.LinkCreated, n)
	client := e.riverClient(t, true)
	stop := start(t, client)
	eventually(t, 10*time.Second, "deliveries under way", func() bool { return sent.Load() >= 20 })
	stop()

	counts := func() (rows, completed int) {
		t.Helper()
		if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_deliveries`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		return rows, e.jobCount(t, "completed")
	}
	rows, completed := counts()
	if int(sent.Load()) != rows || rows != completed {
		t.Fatalf("after a graceful stop: %d sent, %d recorded, %d jobs completed; want all equal", sent.Load(), rows, completed)
	}
	t.Logf("stopped after %d of %d", rows, n)

	start(t, e.riverClient(t, true))
	eventually(t, 30*time.Second, "every job completed", func() bool { return e.jobCount(t, "completed") == n })
	if rows, _ := counts(); rows != n || int(sent.Load()) != n {
		t.Fatalf("after the restart: %d recorded, %d sent; want %d", rows, sent.Load(), n)
	}
}

// TestBatchWithAnUnrecordableSuccess: a batch holding a success that
// cannot be recorded (its subscription was deleted meanwhile) records the
// others, and fails that one alone.
func TestBatchWithAnUnrecordableSuccess(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	kept := e.create(t, "http://127.0.0.1:9/kept", event.LinkCreated)
	gone := e.create(t, "http://127.0.0.1:9/gone", event.LinkCreated)
	jobs := e.fanOut(t, event.LinkCreated, 2) // one job per event and subscription
	if err := e.svc.Delete(context.Background(), e.ws, gone.ID); err != nil {
		t.Fatal(err)
	}
	errs := e.svc.WriteSuccessesForTest(context.Background(), jobs)
	var recorded, failed int
	for i, err := range errs {
		switch {
		case jobs[i].SubscriptionID == gone.ID && err != nil:
			failed++
		case jobs[i].SubscriptionID == kept.ID && err == nil:
			recorded++
		default:
			t.Errorf("job of %s: %v", jobs[i].SubscriptionID, err)
		}
	}
	if recorded != 2 || failed != 2 || len(e.deliveries(t, kept)) != 2 {
		t.Fatalf("%d recorded, %d failed, %d rows; want 2, 2, 2", recorded, failed, len(e.deliveries(t, kept)))
	}
}
