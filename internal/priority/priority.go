// Package priority gives the redirect precedence over the work that shares
// its machine and database. The redirect counts its requests (one atomic
// add each); while their rate is at or above a threshold the redirect is
// busy, and work that yields to it (webhook deliveries, analytics reports)
// is paced by a Budget. On a saturated instance the redirect keeps the CPU
// and the yielding work catches up when the burst is over. Nothing is
// dropped by pacing: a delivery waits with its job still queued in
// PostgreSQL, a report waits a bounded time and is then refused with
// Retry-After.
package priority

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Tick is how often the governor samples the redirect's count; the rate is
// taken over the last second (windowTicks ticks).
const (
	Tick        = 100 * time.Millisecond
	windowTicks = 10
)

// Governor knows whether the redirect is busy.
type Governor struct {
	threshold int64 // requests in the last second that make the redirect busy
	hits      atomic.Int64
	busy      atomic.Bool

	mu     sync.Mutex // guards the window, advanced by tick
	last   int64
	window [windowTicks]int64
	pos    int
	sum    int64
}

// NewGovernor returns a governor that calls the redirect busy while it
// serves at least perSecond requests a second.
func NewGovernor(perSecond int64) *Governor {
	return &Governor{threshold: max(1, perSecond)}
}

// Hit counts one redirect request.
func (g *Governor) Hit() { g.hits.Add(1) }

// Busy reports whether the redirect served at least the threshold in the
// last second (as of the last tick).
func (g *Governor) Busy() bool { return g != nil && g.busy.Load() }

// Rate is the redirect's requests in the last second (as of the last tick).
func (g *Governor) Rate() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sum
}

// Run samples the count every Tick until ctx ends.
func (g *Governor) Run(ctx context.Context) {
	t := time.NewTicker(Tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			g.Sample()
		}
	}
}

// Sample moves the one-second window on by one Tick. Run calls it every
// Tick; tests call it directly.
func (g *Governor) Sample() {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.hits.Load()
	d := now - g.last
	g.last = now
	g.sum += d - g.window[g.pos]
	g.window[g.pos] = d
	g.pos = (g.pos + 1) % windowTicks
	g.busy.Store(g.sum >= g.threshold)
}

// Budget paces one kind of yielding work while the redirect is busy. It
// holds units (whatever the work counts: attempts, milliseconds) refilled
// at a fixed rate up to a burst; while the redirect is not busy it is not
// consulted and refills.
type Budget struct {
	g            *Governor
	rate, burst  float64
	now          func() time.Time
	mu           sync.Mutex
	balance      float64
	at           time.Time
	waited       atomic.Int64 // nanoseconds spent waiting in Acquire
	waiting      atomic.Int64 // callers waiting in Acquire now
	pollInterval time.Duration
}

// NewBudget returns a budget of rate units a second, holding at most burst,
// that applies while g says the redirect is busy.
func NewBudget(g *Governor, rate, burst float64) *Budget {
	return &Budget{g: g, rate: rate, burst: burst, balance: burst, now: time.Now, pollInterval: 20 * time.Millisecond}
}

// refill brings the balance up to date; b.mu is held.
func (b *Budget) refill() {
	now := b.now()
	if !b.at.IsZero() {
		b.balance = min(b.burst, b.balance+now.Sub(b.at).Seconds()*b.rate)
	}
	b.at = now
}

// Acquire takes cost units: at once when the redirect is not busy or the
// budget covers them, else once it has refilled enough, waiting at most
// maxWait. It reports whether the units were taken; false means maxWait
// passed first (the caller decides whether to go on anyway or refuse).
func (b *Budget) Acquire(ctx context.Context, cost float64, maxWait time.Duration) (bool, error) {
	if b == nil {
		return true, nil
	}
	start := b.now()
	deadline := start.Add(maxWait)
	defer func() { b.waited.Add(int64(b.now().Sub(start))) }()
	for {
		b.mu.Lock()
		b.refill()
		if !b.g.Busy() || b.balance >= cost {
			if b.g.Busy() {
				b.balance -= cost
			}
			b.mu.Unlock()
			return true, nil
		}
		need := time.Duration((cost - b.balance) / b.rate * float64(time.Second))
		b.mu.Unlock()
		left := deadline.Sub(b.now())
		if left <= 0 {
			return false, nil
		}
		// Re-check at least every pollInterval: the redirect may calm down
		// before the budget has refilled.
		if err := b.pause(ctx, min(need, left, b.pollInterval)); err != nil {
			return false, err
		}
	}
}

// pause waits d (or until ctx ends), counted in Waiting.
func (b *Budget) pause(ctx context.Context, d time.Duration) error {
	b.waiting.Add(1)
	defer b.waiting.Add(-1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Waiting is how many callers are waiting in Acquire now.
func (b *Budget) Waiting() int64 {
	if b == nil {
		return 0
	}
	return b.waiting.Load()
}

// Adjust corrects the balance by what the work used beyond (delta > 0) or
// below (delta < 0) what it acquired. Only work done while the redirect is
// busy is charged; the debt is capped at one burst.
func (b *Budget) Adjust(delta float64) {
	if b == nil || !b.g.Busy() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	b.balance = max(-b.burst, min(b.burst, b.balance-delta))
}

// Waited is the total time callers spent waiting in Acquire.
func (b *Budget) Waited() time.Duration {
	if b == nil {
		return 0
	}
	return time.Duration(b.waited.Load())
}
