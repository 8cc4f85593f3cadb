package priority

import (
	"context"
	"errors"
	"testing"
	"time"
)

// busyGovernor returns a governor that has just seen threshold hits.
func busyGovernor(t *testing.T, threshold int64) *Governor {
	t.Helper()
	g := NewGovernor(threshold)
	for range threshold {
		g.Hit()
	}
	g.Sample()
	if !g.Busy() {
		t.Fatalf("after %d hits in one sample, Busy() = false (rate %d)", threshold, g.Rate())
	}
	return g
}

func TestGovernorIsBusyOverTheLastSecondOnly(t *testing.T) {
	g := NewGovernor(100)
	for range 99 {
		g.Hit()
	}
	g.Sample()
	if g.Busy() || g.Rate() != 99 {
		t.Fatalf("99 hits, threshold 100: busy %v, rate %d; want not busy, 99", g.Busy(), g.Rate())
	}
	g.Hit()
	g.Sample()
	if !g.Busy() || g.Rate() != 100 {
		t.Fatalf("100 hits within the window: busy %v, rate %d; want busy, 100", g.Busy(), g.Rate())
	}
	// Nine quiet samples keep both hit samples in the one-second window...
	for range windowTicks - 2 {
		g.Sample()
	}
	if !g.Busy() {
		t.Fatalf("hits still inside the window: rate %d, want busy", g.Rate())
	}
	// ...the next one drops the 99.
	g.Sample()
	if g.Busy() || g.Rate() != 1 {
		t.Fatalf("after the window passed: busy %v, rate %d; want not busy, 1", g.Busy(), g.Rate())
	}
	var nilGov *Governor
	if nilGov.Busy() {
		t.Fatal("a nil governor is busy")
	}
}

func TestBudgetIsNotConsultedWhileTheRedirectIsCalm(t *testing.T) {
	g := NewGovernor(10)
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
	g := busyGovernor(t, 10)
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
	g := busyGovernor(t, 10)
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
	g := busyGovernor(t, 10)
	b := NewBudget(g, 0.001, 1)
	if ok, _ := b.Acquire(context.Background(), 1, 0); !ok {
		t.Fatal("the burst was refused")
	}
	done := make(chan bool, 1)
	go func() {
		ok, _ := b.Acquire(context.Background(), 1, time.Minute)
		done <- ok
	}()
	for range windowTicks { // a quiet second: the redirect is no longer busy
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
