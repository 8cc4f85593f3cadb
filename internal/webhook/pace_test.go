package webhook_test

import (
	"context"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/priority"
)

// While the redirect is busy and the delivery pace is spent, an attempt
// waits, sending nothing; once the redirect calms down it is delivered.
func TestAttemptsYieldToABusyRedirect(t *testing.T) {
	t.Parallel()
	gov, latency := priority.SaturatedGovernor()
	pace := priority.NewBudget(gov, 0.001, 1) // one unit, then one per 1,000 s
	if ok, _ := pace.Acquire(context.Background(), 1, 0); !ok {
		t.Fatal("the pace's burst was refused")
	}
	e := setup(t, opts{pace: pace})
	rcv := newReceiver(t, nil)
	sub := e.create(t, rcv.URL+"/hook", event.LinkCreated)
	evID := e.recordEvent(t, event.LinkCreated, map[string]any{"link": map[string]any{"id": "lnk_x"}})

	done := make(chan error, 1)
	go func() {
		_, err := e.work(t, e.argsFor(t, sub, evID, event.LinkCreated), 1)
		done <- err
	}()
	eventually(t, 10*time.Second, "the attempt waits for the pace", func() bool { return pace.Waiting() == 1 })
	if n := len(rcv.got); n != 0 {
		t.Fatalf("the receiver got %d requests while the attempt waited for the pace", n)
	}
	if ds := e.deliveries(t, sub); len(ds) != 0 {
		t.Fatalf("%d deliveries recorded while the attempt waited", len(ds))
	}

	latency.Set(0)
	for range 10 { // a calm second: the process is no longer saturated
		gov.Sample()
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Work: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the attempt did not finish within 30 s of the redirect calming down")
	}
	if got := rcv.next(t); got.header.Get("Service-Delivery-Attempt") != "1" {
		t.Errorf("delivered with headers %v", got.header)
	}
	if ds := e.deliveries(t, sub); len(ds) != 1 || ds[0].Status != "succeeded" {
		t.Errorf("deliveries after the wait: %+v", ds)
	}
}
