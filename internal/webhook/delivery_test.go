package webhook_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/webhook"
)

// argsFor is the job the fan-out would enqueue for sub and the event.
func (e *env) argsFor(t *testing.T, sub webhook.Resource, eventID [16]byte, typ event.Type) webhook.DeliverArgs {
	return webhook.DeliverArgs{SubscriptionID: sub.ID, WorkspaceID: e.ws, EventID: eventID, EventType: typ}
}

func TestDeliveryRequest(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	rcv := newReceiver(t, nil)
	sub := e.create(t, rcv.URL+"/hook", event.LinkCreated)
	evID := e.recordEvent(t, event.LinkCreated, map[string]any{"link": map[string]any{"object": "link", "id": "lnk_x", "title": "Spring <menu> & more"}})
	args := e.argsFor(t, sub, evID, event.LinkCreated)

	if _, err := e.work(t, args, 1); err != nil {
		t.Fatalf("Work: %v", err)
	}
	got := rcv.next(t)
	want := map[string]string{
		"Content-Type":             "application/json",
		"User-Agent":               "linkqr-webhooks/1",
		"Service-Event-Id":         id.Format(id.Event, evID),
		"Service-Delivery-Attempt": "1",
	}
	for k, v := range want {
		if got.header.Get(k) != v {
			t.Errorf("header %s = %q, want %q", k, got.header.Get(k), v)
		}
	}
	sig := got.header.Get("Service-Signature")
	ts, sigs, err := webhook.ParseSignature(sig)
	if err != nil || len(sigs) != 1 || ts != e.clock.Now().Unix() {
		t.Fatalf("Service-Signature %q: %v", sig, err)
	}
	if !strings.HasSuffix(sig, ",v1="+independentHMAC(sub.Secret, ts, got.body)) {
		t.Errorf("signature %s does not match an independent HMAC of the body", sig)
	}
	if err := webhook.Verify(got.body, sig, sub.Secret, webhook.DefaultTolerance, e.clock.Now()); err != nil {
		t.Errorf("Verify: %v", err)
	}

	env := decode(t, got.body)
	if env["id"] != id.Format(id.Event, evID) || env["object"] != "event" || env["type"] != "link.created" ||
		env["workspace_id"] != id.Format(id.Workspace, e.ws) || len(env) != 6 {
		t.Errorf("envelope %s", got.body)
	}
	if _, err := time.Parse(time.RFC3339Nano, env["created_at"].(string)); err != nil || !strings.HasSuffix(env["created_at"].(string), "Z") {
		t.Errorf("created_at %v", env["created_at"])
	}
	if link := env["data"].(map[string]any)["link"].(map[string]any); link["title"] != "Spring <menu> & more" {
		t.Errorf("data.link %v", link)
	}
	var compact bytes.Buffer
	_ = compactJSON(&compact, got.body)
	if !bytes.Equal(compact.Bytes(), got.body) {
		t.Errorf("body is not compact JSON: %s", got.body)
	}

	ds := e.deliveries(t, sub)
	if len(ds) != 1 {
		t.Fatalf("%d deliveries", len(ds))
	}
	d := ds[0]
	if d.Status != "succeeded" || d.Attempt != 1 || d.ResponseStatus == nil || *d.ResponseStatus != 204 || d.DurationMS == nil ||
		d.Error != nil || d.NextAttemptAt != nil || d.EventID != evID || d.EventType != event.LinkCreated ||
		d.ID == (uuid.UUID{}) || d.SubscriptionID != sub.ID {
		t.Errorf("delivery %+v", d)
	}
	if w := d.Wire(); w.Object != "delivery" || !strings.HasPrefix(w.ID, "dlv_") || w.WebhookID != id.Format(id.Webhook, sub.ID) ||
		w.EventID != id.Format(id.Event, evID) || w.EventType != "link.created" {
		t.Errorf("wire delivery %+v", w)
	}

	// Another attempt of the same event: same id and body, next attempt number.
	if _, err := e.work(t, args, 2); err != nil {
		t.Fatal(err)
	}
	again := rcv.next(t)
	if again.header.Get("Service-Event-Id") != want["Service-Event-Id"] || again.header.Get("Service-Delivery-Attempt") != "2" || !bytes.Equal(again.body, got.body) {
		t.Errorf("second attempt: %v %s", again.header, again.body)
	}
	if e.succeeded.Load() != 2 || e.failed.Load() != 0 {
		t.Errorf("OnAttempt saw %d succeeded, %d failed; want 2, 0", e.succeeded.Load(), e.failed.Load())
	}
}

func TestRotationSignsWithBothSecretsFor24Hours(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	rcv := newReceiver(t, nil)
	sub := e.create(t, rcv.URL, event.LinkDeleted)
	rotated, err := e.svc.RotateSecret(context.Background(), e.ws, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	args := e.argsFor(t, sub, e.recordEvent(t, event.LinkDeleted, map[string]any{"link": nil}), event.LinkDeleted)

	if _, err := e.work(t, args, 1); err != nil {
		t.Fatal(err)
	}
	got := rcv.next(t)
	ts, _, _ := webhook.ParseSignature(got.header.Get("Service-Signature"))
	want := "t=" + strconv.FormatInt(ts, 10) + ",v1=" + independentHMAC(rotated.Secret, ts, got.body) + ",v1=" + independentHMAC(sub.Secret, ts, got.body)
	if got.header.Get("Service-Signature") != want {
		t.Fatalf("during the overlap: %s\nwant %s (new first, then old)", got.header.Get("Service-Signature"), want)
	}

	e.clock.Advance(24*time.Hour - time.Second)
	if _, err := e.work(t, args, 2); err != nil {
		t.Fatal(err)
	}
	if _, sigs, _ := webhook.ParseSignature(rcv.next(t).header.Get("Service-Signature")); len(sigs) != 2 {
		t.Fatalf("23:59:59 after the rotation: %d signatures, want 2", len(sigs))
	}

	e.clock.Advance(2 * time.Second)
	if _, err := e.work(t, args, 3); err != nil {
		t.Fatal(err)
	}
	got = rcv.next(t)
	ts, sigs, _ := webhook.ParseSignature(got.header.Get("Service-Signature"))
	if len(sigs) != 1 || got.header.Get("Service-Signature") != "t="+strconv.FormatInt(ts, 10)+",v1="+independentHMAC(rotated.Secret, ts, got.body) {
		t.Fatalf("after 24 h: %s, want the new secret only", got.header.Get("Service-Signature"))
	}
	if webhook.Verify(got.body, got.header.Get("Service-Signature"), sub.Secret, webhook.DefaultTolerance, e.clock.Now()) == nil {
		t.Fatal("the old secret still verifies after 24 h")
	}
}

// TestFailedAttempts: every way a receiver can fail is one failed delivery
// row, and the next attempt is scheduled per the schedule.
func TestFailedAttempts(t *testing.T) {
	t.Parallel()
	huge := bytes.Repeat([]byte("x"), 10<<20)
	cases := []struct {
		name       string
		handle     http.HandlerFunc
		wantStatus int // 0: no response
		wantErr    string
	}{
		{"500", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(500)
			_, _ = w.Write([]byte("boom"))
		}, 500, "HTTP 500"},
		{"302", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		}, 302, "redirects are not followed"},
		{"slow", func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done() // answers only after the client gave up
		}, 0, "no response within 300ms"},
		{"closed connection", func(w http.ResponseWriter, _ *http.Request) {
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
		}, 0, "EOF"},
		{"huge 500 body", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(500)
			_, _ = w.Write(huge)
		}, 500, "HTTP 500"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, opts{timeout: 300 * time.Millisecond})
			var hits atomic.Int32
			rcv := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/elsewhere" {
					hits.Add(1)
				}
				c.handle(w, r)
			})
			sub := e.create(t, rcv.URL+"/hook", event.LinkUpdated)
			args := e.argsFor(t, sub, e.recordEvent(t, event.LinkUpdated, map[string]any{}), event.LinkUpdated)
			job, err := e.work(t, args, 1)
			if err == nil {
				t.Fatal("Work succeeded")
			}
			var cancel *rivertype.JobCancelError
			if errors.As(err, &cancel) {
				t.Fatalf("Work cancelled the job (%v); a failure must be retried", err)
			}
			ds := e.deliveries(t, sub)
			if len(ds) != 1 {
				t.Fatalf("%d deliveries, want 1", len(ds))
			}
			d := ds[0]
			if d.Status != "failed" || d.Attempt != 1 || d.Error == nil || !strings.Contains(*d.Error, c.wantErr) {
				t.Fatalf("delivery %+v (error %v), want failed with %q", d, deref(d.Error), c.wantErr)
			}
			if (c.wantStatus == 0) != (d.ResponseStatus == nil) || (d.ResponseStatus != nil && *d.ResponseStatus != c.wantStatus) {
				t.Errorf("response_status %v, want %d", d.ResponseStatus, c.wantStatus)
			}
			if d.ResponseBody != nil && len(*d.ResponseBody) > 1024 {
				t.Errorf("recorded %d bytes of the response", len(*d.ResponseBody))
			}
			next := e.clock.Now().Add(webhook.RetryDelay(job.ID, 1)).Truncate(time.Microsecond)
			if d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(next) {
				t.Errorf("next_attempt_at %v, want %v", d.NextAttemptAt, next)
			}
			if got := (e.svc.Worker()).NextRetry(job); !got.Equal(next) {
				t.Errorf("NextRetry %v, want %v (River and the row must agree)", got, next)
			}
			if delay := next.Sub(e.clock.Now()); delay < 4500*time.Millisecond || delay > 5500*time.Millisecond {
				t.Errorf("first retry after %s, want 5 s ± 10 %%", delay)
			}
			if hits.Load() != 0 {
				t.Error("the redirect was followed")
			}
			if e.failed.Load() != 1 || e.succeeded.Load() != 0 {
				t.Errorf("OnAttempt saw %d failed, %d succeeded; want 1, 0", e.failed.Load(), e.succeeded.Load())
			}
		})
	}
}

func TestHugeSuccessfulBodyIsReadBoundedly(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	huge := bytes.Repeat([]byte("y"), 50<<20)
	rcv := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(huge) })
	sub := e.create(t, rcv.URL, event.LinkCreated)
	if _, err := e.work(t, e.argsFor(t, sub, e.recordEvent(t, event.LinkCreated, map[string]any{}), event.LinkCreated), 1); err != nil {
		t.Fatalf("a 2xx is a success whatever its body: %v", err)
	}
	d := e.deliveries(t, sub)[0]
	if d.Status != "succeeded" || d.ResponseBody == nil || len(*d.ResponseBody) != 1024 || *d.DurationMS > 5000 {
		t.Fatalf("delivery %+v, body %d bytes", d, len(deref(d.ResponseBody)))
	}
}

func TestRetrySchedule(t *testing.T) {
	t.Parallel()
	schedule := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	if webhook.MaxAttempts != 8 {
		t.Fatalf("MaxAttempts = %d, want 8 (+0 and seven retries)", webhook.MaxAttempts)
	}
	for i, base := range schedule {
		attempt := i + 1
		lo, hi := time.Duration(float64(base)*0.9), time.Duration(float64(base)*1.1)
		minD, maxD := hi, lo
		for id := int64(1); id <= 500; id++ {
			d := webhook.RetryDelay(id, attempt)
			if d < lo || d > hi {
				t.Fatalf("attempt %d, job %d: %s outside %s ± 10 %%", attempt, id, d, base)
			}
			if d != webhook.RetryDelay(id, attempt) {
				t.Fatal("RetryDelay is not deterministic")
			}
			minD, maxD = min(minD, d), max(maxD, d)
		}
		if minD > time.Duration(float64(base)*0.92) || maxD < time.Duration(float64(base)*1.08) {
			t.Errorf("attempt %d: delays span only %s–%s; the jitter does not spread", attempt, minD, maxD)
		}
	}

	// NextRetry uses the service's clock: with a fixed clock it is exact.
	e := setup(t, opts{})
	w := e.svc.Worker()
	for attempt := 1; attempt <= 7; attempt++ {
		job := &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{ID: 42, Attempt: attempt}}
		if got, want := w.NextRetry(job), e.clock.Now().Add(webhook.RetryDelay(42, attempt)).Truncate(time.Microsecond); !got.Equal(want) {
			t.Errorf("attempt %d: NextRetry %v, want %v", attempt, got, want)
		}
	}

	// The last attempt's failure schedules nothing.
	rcv := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
	sub := e.create(t, rcv.URL, event.LinkCreated)
	if _, err := e.work(t, e.argsFor(t, sub, e.recordEvent(t, event.LinkCreated, map[string]any{}), event.LinkCreated), webhook.MaxAttempts); err == nil {
		t.Fatal("a failed last attempt must report its error (River then discards the job)")
	}
	if d := e.deliveries(t, sub)[0]; d.Status != "failed" || d.NextAttemptAt != nil {
		t.Fatalf("last attempt: %+v", d)
	}
}

func TestAutoDisableAfterFiveDaysOfFailures(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	ctx := context.Background()
	var healthy atomic.Bool
	var requests atomic.Int32
	rcv := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		if healthy.Load() {
			w.WriteHeader(200)
			return
		}
		w.WriteHeader(500)
	})
	sub := e.create(t, rcv.URL, event.LinkCreated, event.ScanCreated)
	id := sub.ID
	newArgs := func() webhook.DeliverArgs {
		return e.argsFor(t, sub, e.recordEvent(t, event.LinkCreated, map[string]any{}), event.LinkCreated)
	}
	failAt := func(advance time.Duration) error {
		e.clock.Advance(advance)
		_, err := e.work(t, newArgs(), 1)
		return err
	}
	status := func() webhook.Resource {
		r, err := e.svc.Get(ctx, e.ws, id)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	// A success in the middle resets the streak.
	_ = failAt(0)
	healthy.Store(true)
	e.clock.Advance(3 * 24 * time.Hour)
	if _, err := e.work(t, newArgs(), 1); err != nil {
		t.Fatal(err)
	}
	healthy.Store(false)
	_ = failAt(time.Minute) // the streak starts here
	if err := failAt(4 * 24 * time.Hour); err == nil || status().Status != "enabled" {
		t.Fatalf("disabled after 4 days of failures (or the attempt succeeded: %v)", err)
	}
	err := failAt(24*time.Hour + time.Second)
	var cancel *rivertype.JobCancelError
	if !errors.As(err, &cancel) {
		t.Fatalf("the attempt that disables must cancel the job, got %v", err)
	}
	r := status()
	if r.Status != "disabled" || r.DisabledReason == nil || !strings.Contains(*r.DisabledReason, "failed") {
		t.Fatalf("after 5 days of failures: %+v", r)
	}
	// The audit log says linkqr itself disabled it, in the same transaction.
	p, err := audit.List(ctx, e.db, e.ws, audit.Filter{Action: string(audit.WebhookDisabled)}, nil, 10)
	if err != nil || len(p.Entries) != 1 || p.Entries[0].Actor.Type != audit.ActorSystem || p.Entries[0].Target.ID != r.Wire().ID ||
		!strings.Contains(string(p.Entries[0].Changes), "deliveries failed") {
		t.Errorf("webhook.disabled entries: %+v (%v)", p.Entries, err)
	}
	if d := e.deliveries(t, sub)[0]; d.Status != "failed" || d.NextAttemptAt != nil {
		t.Errorf("the disabling attempt schedules another: %+v", d)
	}
	if ok, err := e.svc.Subscribed(ctx, e.ws, event.ScanCreated); ok || err != nil {
		t.Errorf("Subscribed after disable = %v, %v", ok, err)
	}

	// Disabled: a queued job sends nothing and is cancelled.
	before := requests.Load()
	if _, err := e.work(t, newArgs(), 2); !errors.As(err, &cancel) {
		t.Fatalf("job of a disabled subscription: %v", err)
	}
	if requests.Load() != before {
		t.Fatal("a disabled subscription received a request")
	}

	// Re-enabling forgets the streak: the next failure does not disable.
	if _, err := e.svc.Update(ctx, e.ws, id, webhook.UpdateInput{Status: webhook.Some("enabled")}); err != nil {
		t.Fatal(err)
	}
	if err := failAt(time.Hour); err == nil || errors.As(err, &cancel) || status().Status != "enabled" {
		t.Fatalf("first failure after re-enabling: %v, %s", err, status().Status)
	}
}

func TestDeletedSubscriptionReceivesNothing(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	var requests atomic.Int32
	rcv := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { requests.Add(1) })
	sub := e.create(t, rcv.URL, event.LinkCreated)
	args := e.argsFor(t, sub, e.recordEvent(t, event.LinkCreated, map[string]any{}), event.LinkCreated)
	if err := e.svc.Delete(context.Background(), e.ws, args.SubscriptionID); err != nil {
		t.Fatal(err)
	}
	var cancel *rivertype.JobCancelError
	if _, err := e.work(t, args, 1); !errors.As(err, &cancel) || requests.Load() != 0 {
		t.Fatalf("deleted subscription: %v, %d requests", err, requests.Load())
	}
}

// TestRebindingRefusedAtDelivery: the host passed the creation check with
// a public address, then resolves to loopback; the attempt fails at dial
// time and the receiver on loopback gets nothing.
func TestRebindingRefusedAtDelivery(t *testing.T) {
	t.Parallel()
	res := newResolver("rebind.example", "93.184.216.34")
	e := setup(t, opts{denyPrivate: true, resolver: res})
	var requests atomic.Int32
	rcv := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { requests.Add(1) })
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(rcv.URL, "http://"))
	sub := e.create(t, "https://rebind.example:"+port+"/hook", event.LinkCreated)
	res.set("rebind.example", "127.0.0.1")

	if _, err := e.work(t, e.argsFor(t, sub, e.recordEvent(t, event.LinkCreated, map[string]any{}), event.LinkCreated), 1); err == nil {
		t.Fatal("delivery to a rebound host succeeded")
	}
	d := e.deliveries(t, sub)[0]
	if d.Status != "failed" || d.Error == nil || !strings.Contains(*d.Error, "not public") {
		t.Fatalf("delivery %+v (%s)", d, deref(d.Error))
	}
	select {
	case <-rcv.got:
		t.Fatal("the loopback receiver got the request")
	default:
	}
	if requests.Load() != 0 {
		t.Fatal("the loopback receiver got the request")
	}
}

// capture is a JobInserter that remembers what it was asked to insert and
// inserts it with a real (insert-only) River client.
type capture struct {
	river  webhook.JobInserter
	params []river.InsertManyParams
}

func (c *capture) InsertManyTx(ctx context.Context, tx pgx.Tx, p []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	c.params = append(c.params, p...)
	return c.river.InsertManyTx(ctx, tx, p)
}

func TestManualRetry(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	ctx := context.Background()
	insertOnly, err := river.NewClient(riverpgxv5.New(e.pool), &river.Config{Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	jobs := &capture{river: insertOnly}
	e.svc.UseJobs(jobs)
	var healthy atomic.Bool
	rcv := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		if !healthy.Load() {
			w.WriteHeader(500)
		}
	})
	sub := e.create(t, rcv.URL, event.LinkCreated)
	subID := sub.ID
	if _, err := e.work(t, e.argsFor(t, sub, e.recordEvent(t, event.LinkCreated, map[string]any{}), event.LinkCreated), 1); err == nil {
		t.Fatal("first attempt should fail")
	}
	failed := e.deliveries(t, sub)[0]
	failedID := failed.ID

	if _, err := e.svc.RetryDelivery(ctx, e.other, subID, failedID); !errors.Is(err, id.ErrNotFound) {
		t.Fatalf("retry from another workspace: %v", err)
	}
	pending, err := e.svc.RetryDelivery(ctx, e.ws, subID, failedID)
	if err != nil {
		t.Fatal(err)
	}
	if pending.Status != "pending" || pending.Attempt != 2 || pending.EventID != failed.EventID || len(jobs.params) != 1 {
		t.Fatalf("pending retry %+v, %d jobs", pending, len(jobs.params))
	}
	var n int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'webhook_delivery' AND max_attempts = 1`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("River holds %d retry jobs (%v)", n, err)
	}
	rcv.next(t) // the failed first attempt

	healthy.Store(true)
	args := jobs.params[0].Args.(webhook.DeliverArgs)
	if _, err := e.work(t, args, 1); err != nil {
		t.Fatalf("retry attempt: %v", err)
	}
	if got := rcv.next(t); got.header.Get("Service-Delivery-Attempt") != "2" {
		t.Errorf("retry sent attempt %s", got.header.Get("Service-Delivery-Attempt"))
	}
	ds := e.deliveries(t, sub)
	if len(ds) != 2 || ds[0].ID != pending.ID || ds[0].Status != "succeeded" || ds[0].Attempt != 2 {
		t.Fatalf("after the retry: %+v", ds)
	}

	if _, err := e.svc.Update(ctx, e.ws, subID, webhook.UpdateInput{Status: webhook.Some("disabled")}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.RetryDelivery(ctx, e.ws, subID, failedID); !errors.Is(err, webhook.ErrDisabled) {
		t.Fatalf("retry of a disabled subscription: %v", err)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
