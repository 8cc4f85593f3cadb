package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/validate"
	"github.com/linkqr/linkqr/internal/webhook"
)

// TestSendTest: a ping goes through the real River worker to the one
// subscription it tests, signed with its secret, and its delivery is
// logged; other subscriptions get nothing; ping is not subscribable.
func TestSendTest(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	ctx := context.Background()
	client := e.riverClient(t, true)
	e.svc.UseJobs(client)
	start(t, client)
	rcv := newReceiver(t, nil)
	other := newReceiver(t, nil)
	sub := e.create(t, rcv.URL+"/hook", event.ScanCreated)
	e.create(t, other.URL+"/hook", event.LinkCreated, event.ScanCreated)

	if _, err := e.svc.SendTest(ctx, e.other, sub.ID); !errors.Is(err, id.ErrNotFound) {
		t.Fatalf("SendTest from another workspace: %v", err)
	}
	pending, err := e.svc.SendTest(ctx, e.ws, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	if pending.Status != webhook.DeliveryPending || pending.EventType != event.Ping || pending.Attempt != 1 {
		t.Fatalf("pending test delivery %+v", pending)
	}
	got := rcv.next(t)
	if err := webhook.Verify(got.body, got.header.Get(webhook.HeaderSignature), sub.Secret, webhook.DefaultTolerance, e.clock.Now()); err != nil {
		t.Errorf("ping signature: %v", err)
	}
	env := decode(t, got.body)
	data, _ := env["data"].(map[string]any)
	hook, _ := data["webhook"].(map[string]any)
	if env["type"] != "ping" || env["object"] != "event" || !strings.HasPrefix(env["id"].(string), "evt_") ||
		hook["id"] != sub.Wire().ID || hook["secret"] != nil {
		t.Errorf("ping envelope %s", got.body)
	}
	// OnAttempt hears of the attempt once its record committed: just after
	// the row shows.
	eventually(t, 10*time.Second, "the test delivery is logged as succeeded and counted", func() bool {
		ds := e.deliveries(t, sub)
		return len(ds) == 1 && ds[0].ID == pending.ID && ds[0].Status == webhook.DeliverySucceeded && e.succeeded.Load() >= 1
	})
	if e.succeeded.Load() != 1 {
		t.Errorf("OnAttempt saw %d successes", e.succeeded.Load())
	}
	select {
	case g := <-other.got:
		t.Errorf("another subscription received the ping: %s", g.body)
	default:
	}

	_, err = e.svc.Create(ctx, e.ws, webhook.CreateInput{URL: rcv.URL, Events: []string{"ping"}})
	if ve := (validate.Errors{}); !errors.As(err, &ve) || ve[0].Pointer != "/events/0" {
		t.Errorf("subscribing to ping: %v", err)
	}
	if _, err := e.svc.Update(ctx, e.ws, sub.ID, webhook.UpdateInput{Status: webhook.Some(webhook.StatusDisabled)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.SendTest(ctx, e.ws, sub.ID); !errors.Is(err, webhook.ErrDisabled) {
		t.Errorf("SendTest to a disabled subscription: %v", err)
	}
}

// TestHealth: success rate, p95 and the last failure over the window, per
// subscription, from the delivery rows; rows outside the window and other
// workspaces' subscriptions do not count.
func TestHealth(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	ctx := context.Background()
	var fail atomic.Bool
	rcv := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		if fail.Load() {
			w.WriteHeader(503)
		}
	})
	sub := e.create(t, rcv.URL, event.LinkCreated)
	quiet := e.create(t, rcv.URL, event.LinkCreated)
	attempt := func() {
		t.Helper()
		_, _ = e.work(t, e.argsFor(t, sub, e.recordEvent(t, event.LinkCreated, map[string]any{}), event.LinkCreated), 1)
		rcv.next(t)
	}
	fail.Store(true)
	attempt() // outside the window once the clock moves on
	e.clock.Advance(webhook.HealthWindow + time.Minute)
	fail.Store(false)
	for range 3 {
		attempt()
	}
	fail.Store(true)
	attempt()
	fail.Store(false)
	attempt()

	h, err := e.svc.Health(ctx, e.ws, []uuid.UUID{sub.ID, quiet.ID})
	if err != nil {
		t.Fatal(err)
	}
	got := h[sub.ID]
	rate, ok := got.SuccessRate()
	if got.Attempts != 5 || got.Succeeded != 4 || !ok || rate != 0.8 || got.P95 == nil ||
		got.LastFailureAt == nil || !got.LastFailureAt.Equal(e.clock.Now()) || got.LastFailureError == nil || *got.LastFailureError != "HTTP 503" {
		t.Errorf("health %+v (rate %v)", got, rate)
	}
	if q, ok := h[quiet.ID]; ok {
		t.Errorf("a subscription without deliveries has health %+v", q)
	}
	if _, ok := (webhook.Health{}).SuccessRate(); ok {
		t.Error("zero health reports a success rate")
	}
	if h, err := e.svc.Health(ctx, e.other, []uuid.UUID{sub.ID}); err != nil || len(h) != 0 {
		t.Errorf("another workspace sees health %v (%v)", h, err)
	}
}

// TestQueueStats: depth by state counts only the webhooks queue's
// unfinished jobs, and the oldest due job's wait is measured.
func TestQueueStats(t *testing.T) {
	t.Parallel()
	e := setup(t, opts{})
	ctx := context.Background()
	insertOnly := e.riverClient(t, false)
	e.svc.UseJobs(insertOnly)
	sub := e.create(t, "http://127.0.0.1:9/h", event.LinkCreated)
	st, err := e.svc.QueueStats(ctx)
	if err != nil || len(st.Depth) != len(webhook.QueueStates) || st.Depth["available"] != 0 || st.OldestAvailableAge != 0 {
		t.Fatalf("empty queue: %+v %v", st, err)
	}
	for range 3 {
		if _, err := e.svc.SendTest(ctx, e.ws, sub.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.pool.Exec(ctx, `UPDATE river_job SET scheduled_at = now() - interval '90 seconds' WHERE id = (SELECT min(id) FROM river_job)`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, `INSERT INTO river_job (kind, args, queue, state, max_attempts) VALUES ('other', '{}', 'default', 'available', 1)`); err != nil {
		t.Fatal(err)
	}
	st, err = e.svc.QueueStats(ctx)
	if err != nil || st.Depth["available"] != 3 || st.OldestAvailableAge < 89*time.Second || st.OldestAvailableAge > 10*time.Minute {
		t.Fatalf("queue: %+v %v", st, err)
	}
}
