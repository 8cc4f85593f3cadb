package priority

import (
	"context"
	"errors"
	"testing"
	"time"
)

// busyGovernor returns a saturated governor and its latency source.
func busyGovernor(t *testing.T) (*Governor, *Controlled) {
	t.Helper()
	g, src := SaturatedGovernor()
	if !g.Busy() {
		t.Fatalf("SaturatedGovernor is not busy (p99 %v)", g.Latency())
	}
	return g, src
}

// Saturation is the scheduling latency over the last second, never the
// redirect's request rate.
func TestGovernorIsSaturatedByLatencyOverTheLastSecondOnly(t *testing.T) {
	src := &Controlled{}
	g := NewGovernorFrom(5*time.Millisecond, src.Read)
	tick := func() { // the redirect serves 100,000 a second throughout
		for range 100_000 / windowTicks {
			g.Hit()
		}
		g.Sample()
	}
	src.Set(100 * time.Microsecond)
	for range windowTicks {
		tick()
	}
	if g.Busy() || g.Rate() != 100_000 {
		t.Fatalf("100,000 redirects at a p99 of 100µs: busy %v, rate %d; want calm, 100000", g.Busy(), g.Rate())
	}
	src.Set(20 * time.Millisecond)
	tick()
	// Half the window is at 100µs and half at 20ms: the p99 is 10ms (the
	// lower bound of its bucket), at or above 5ms.
	if !g.Busy() || g.Latency() < 5*time.Millisecond {
		t.Fatalf("p99 %v against 5ms: busy %v; want saturated", g.Latency(), g.Busy())
	}
	src.Set(0)
	for range windowTicks - 1 { // the slow tick is still inside the window
		tick()
	}
	if !g.Busy() {
		t.Fatalf("a slow tick inside the window: p99 %v, want saturated", g.Latency())
	}
	tick() // ...and now it left it
	if g.Busy() {
		t.Fatalf("after a calm second: p99 %v, want calm", g.Latency())
	}
	var nilGov *Governor
	if nilGov.Busy() {
		t.Fatal("a nil governor is busy")
	}
}

// A saturated process with an idle redirect has nothing to protect: the
// work that yields (a backlog of deliveries draining) runs flat out even
// though it saturates the process itself.
func TestGovernorProtectsOnlyAServingRedirect(t *testing.T) {
	src := &Controlled{}
	src.Set(time.Second)
	g := NewGovernorFrom(time.Millisecond, src.Read)
	for range minRedirects - 1 {
		g.Hit()
	}
	g.Sample()
	if g.Busy() {
		t.Fatalf("p99 %v with %d redirects in the last second: saturated, want calm", g.Latency(), g.Rate())
	}
	g.Hit()
	g.Sample()
	if !g.Busy() {
		t.Fatalf("p99 %v with %d redirects in the last second: calm, want saturated", g.Latency(), g.Rate())
	}
}

// A handful of slow events in an idle process says nothing.
func TestGovernorNeedsEnoughEvents(t *testing.T) {
	src := &Controlled{N: 1}
	src.Set(time.Second)
	g := NewGovernorFrom(time.Millisecond, src.Read)
	for range minRedirects {
		g.Hit()
	}
	g.Sample()
	if g.Busy() {
		t.Fatal("saturated on a single scheduling event")
	}
}

// The real source reads the Go scheduler's histogram: an idle test
// process is not saturated.
func TestSchedulerLatenciesOfAnIdleProcess(t *testing.T) {
	h := SchedulerLatencies()
	if len(h.Buckets) != len(h.Counts)+1 || len(h.Counts) == 0 {
		t.Fatalf("scheduler histogram with %d buckets and %d counts", len(h.Buckets), len(h.Counts))
	}
	g := NewGovernor(0)
	g.Sample()
	g.Sample()
	if g.Busy() {
		t.Fatalf("an idle process is saturated (p99 %v)", g.Latency())
	}
}

func TestBudgetIsNotConsultedWhileTheRedirectIsCalm(t *testing.T) {
	g := NewGovernorFrom(time.Millisecond, (&Controlled{}).Read)
	g.Sample()
	b := NewBudget(g, 1, 1)
	for i := range 5 {
		ok, err := b.Acquire(context.Background(), 1, 0)
		if !ok || err != nil {
			t.Fatalf("acquire %d while calm: %v, %v; want true, nil", i, ok, err)
		}
	}
	b.Adjust(100) // not charged while calm
	b.mu.Lock()
	bal := b.balance
	b.mu.Unlock()
	if bal != 1 {
		t.Fatalf("balance after calm work = %v, want the full burst 1", bal)
	}
}

func TestBudgetPacesWhileBusy(t *testing.T) {
	g, _ := busyGovernor(t)
	b := NewBudget(g, 0.001, 2) // refills one unit in 1,000 s: never within the test
	for i := range 2 {
		if ok, err := b.Acquire(context.Background(), 1, 0); !ok || err != nil {
			t.Fatalf("acquire %d within the burst: %v, %v; want true, nil", i, ok, err)
		}
	}
	ok, err := b.Acquire(context.Background(), 1, 30*time.Millisecond)
	if ok || err != nil {
		t.Fatalf("acquire beyond the burst: %v, %v; want false (maxWait passed), nil", ok, err)
	}
	if b.Waited() <= 0 {
		t.Fatal("Waited() did not count the refused wait")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ok, err := b.Acquire(ctx, 1, time.Minute); ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire with a cancelled context: %v, %v; want false, context.Canceled", ok, err)
	}
}

func TestBudgetRefillsAtItsRate(t *testing.T) {
	g, _ := busyGovernor(t)
	b := NewBudget(g, 10, 1)
	now := time.Unix(1_700_000_000, 0)
	b.now = func() time.Time { return now }
	if ok, _ := b.Acquire(context.Background(), 1, 0); !ok {
		t.Fatal("the first unit of the burst was refused")
	}
	if ok, _ := b.Acquire(context.Background(), 1, 0); ok {
		t.Fatal("a second unit was granted with the budget empty and no time passed")
	}
	now = now.Add(100 * time.Millisecond) // 10 units/s: one more unit
	if ok, _ := b.Acquire(context.Background(), 1, 0); !ok {
		t.Fatal("after 100 ms at 10 units/s, a unit was refused")
	}
	// Work that took longer than it acquired leaves a debt, capped at one burst.
	b.Adjust(50)
	now = now.Add(150 * time.Millisecond) // +1.5 units: from -1 to 0.5
	if ok, _ := b.Acquire(context.Background(), 1, 0); ok {
		t.Fatal("a unit was granted while the budget was still repaying a debt")
	}
	now = now.Add(50 * time.Millisecond)
	if ok, _ := b.Acquire(context.Background(), 1, 0); !ok {
		t.Fatal("a unit was refused after the debt was repaid")
	}
}

func TestBudgetLetsWaitersGoWhenTheRedirectCalmsDown(t *testing.T) {
	g, src := busyGovernor(t)
	b := NewBudget(g, 0.001, 1)
	if ok, _ := b.Acquire(context.Background(), 1, 0); !ok {
		t.Fatal("the burst was refused")
	}
	done := make(chan bool, 1)
	go func() {
		ok, _ := b.Acquire(context.Background(), 1, time.Minute)
		done <- ok
	}()
	src.Set(0)
	for range windowTicks { // a calm second: no longer saturated
		g.Sample()
	}
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("the waiter was refused after the redirect calmed down")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the waiter was still waiting 30 s after the redirect calmed down")
	}
}

// Latency with the redirect well below its measured capacity comes from
// other work: nothing is paced then. Measured capacity is the highest rate
// served while latency was high; from CapacityShare of it on, the same
// latency is saturation again.
func TestGovernorSaturatesOnlyNearTheRedirectsCapacity(t *testing.T) {
	src := &Controlled{}
	src.Set(time.Second)
	g := NewGovernorFrom(time.Millisecond, src.Read)
	second := func(redirects int) {
		t.Helper()
		for range windowTicks { // a whole window at this rate
			for range redirects / windowTicks {
				g.Hit()
			}
			g.Sample()
		}
	}
	second(10_000)
	if !g.Busy() || g.Capacity() != 10_000 {
		t.Fatalf("10,000 redirects a second at a p99 of %v: busy %v, capacity %d; want saturated at 10000", g.Latency(), g.Busy(), g.Capacity())
	}
	second(5_000) // half capacity: the latency is someone else's
	if g.Busy() || g.Capacity() != 10_000 {
		t.Fatalf("5,000 a second after 10,000: busy %v, capacity %d; want calm, 10000", g.Busy(), g.Capacity())
	}
	if !g.Contended() {
		t.Fatalf("5,000 a second at a p99 of %v: not contended, want contended (the CPUs are)", g.Latency())
	}
	second(8_000) // CapacityShare of it
	if !g.Busy() {
		t.Fatalf("8,000 a second against a capacity of %d: calm, want saturated", g.Capacity())
	}
	src.Set(0)
	second(5_000)  // the slow ticks leave the window
	second(12_000) // faster, and fast: no new capacity without high latency
	if g.Busy() || g.Contended() || g.Capacity() != 10_000 {
		t.Fatalf("12,000 a second at a p99 of %v: busy %v, contended %v, capacity %d; want calm, 10000", g.Latency(), g.Busy(), g.Contended(), g.Capacity())
	}
}
