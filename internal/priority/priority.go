// Package priority gives the redirect precedence over the work that shares
// its machine and database, at true saturation only. The governor measures
// saturation rather than guessing it from a request rate: every Tick it
// reads how long runnable goroutines waited for a CPU (the Go scheduler's
// latency histogram, runtime/metrics), and the redirect's rate over the
// last second. The process is saturated when the 99th percentile latency
// is at or above a threshold while the redirect serves near its measured
// capacity: the highest rate it has reached while latency was that high.
// A redirect well below that rate has headroom, and latency then comes
// from the other work (analytics queries, deliveries), which would only be
// starved for nothing. Only at saturation does work that yields (webhook
// deliveries, analytics reports) get paced by a Budget. Nothing is dropped
// by pacing: a delivery waits with its job still queued in PostgreSQL, a
// report waits a bounded time and is then refused with Retry-After.
package priority

import (
	"context"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// Tick is how often the governor samples; saturation is judged over the
// last second (windowTicks ticks).
const (
	Tick        = 100 * time.Millisecond
	windowTicks = 10
	// minSamples is how many scheduling events the window needs before its
	// percentile means anything: an idle process is never saturated.
	minSamples = 200
	// minRedirects is how many redirects the last second must have served
	// for there to be anything to protect: without them the yielding work
	// runs flat out, and its own load (32 delivery workers draining a
	// backlog) never slows it down. Measured: with the gate missing, a
	// backlog of 49,000 deliveries drained at 260 a second after the
	// redirect load stopped, against 1,581 a second for the fan-out alone.
	minRedirects = 100
	// CapacityShare is the share of its measured capacity from which the
	// redirect counts as saturated. Closed-loop load at capacity varies by
	// about a tenth from second to second; half of it is headroom.
	CapacityShare = 0.8
)

// DefaultSaturationLatency is the scheduling-latency p99 from which the
// process counts as saturated. Measured on 2 cores against 10,000 links
// (docs/architecture.md "Analytics at scale", "Isolation"): with the redirect driven by 2 or 8 connections
// the p99 stayed at 0.04-0.23 ms; driven closed-loop by 64 connections, at
// its capacity, it was 5-21 ms.
const DefaultSaturationLatency = 2 * time.Millisecond

// Histogram is a cumulative latency histogram: Counts[i] observations in
// [Buckets[i], Buckets[i+1]) seconds, as runtime/metrics reports it.
type Histogram = metrics.Float64Histogram

// LatencySource returns the cumulative histogram of scheduling latencies.
type LatencySource func() *Histogram

// SchedulerLatencies reads the Go scheduler's histogram of how long
// goroutines waited to run.
func SchedulerLatencies() *Histogram {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return &Histogram{}
	}
	return s[0].Value.Float64Histogram()
}

// Governor knows whether the process is saturated.
type Governor struct {
	threshold float64 // seconds of scheduling latency (p99) that mean saturation
	source    LatencySource
	hits      atomic.Int64
	busy      atomic.Bool
	contended atomic.Bool
	p99       atomic.Int64 // nanoseconds, as of the last tick
	capacity  atomic.Int64 // the highest redirects a second seen while latency was at the threshold

	mu      sync.Mutex // guards the ring, advanced by Sample
	ring    [windowTicks][]uint64
	pos     int
	buckets []float64
	// rate of redirect requests, for the metrics
	lastHits int64
	hitRing  [windowTicks]int64
	hitSum   int64
}

// NewGovernor returns a governor over the Go scheduler's latencies that
// calls the process saturated from a p99 of threshold (0: the default).
func NewGovernor(threshold time.Duration) *Governor {
	return NewGovernorFrom(threshold, SchedulerLatencies)
}

// NewGovernorFrom is NewGovernor over another source (tests).
func NewGovernorFrom(threshold time.Duration, source LatencySource) *Governor {
	if threshold <= 0 {
		threshold = DefaultSaturationLatency
	}
	return &Governor{threshold: threshold.Seconds(), source: source}
}

// Hit counts one redirect request: the rate is in the metrics, and a
// redirect that served nothing in the last second needs no protection.
func (g *Governor) Hit() { g.hits.Add(1) }

// Busy reports whether the process was saturated over the last second (as
// of the last tick): only then does yielding work wait.
func (g *Governor) Busy() bool { return g != nil && g.busy.Load() }

// Contended reports whether goroutines waited for a CPU at the saturation
// latency over the last second while the redirect served traffic, at any
// share of its capacity. Work that nobody waits for and that gets cheaper
// when done less often (folding scans: its cost is per window, not per
// scan) defers on this; work that would only be starved (deliveries,
// reports) waits on Busy.
func (g *Governor) Contended() bool { return g != nil && g.contended.Load() }

// Rate is the redirect's requests in the last second (as of the last tick).
func (g *Governor) Rate() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.hitSum
}

// Latency is the scheduling-latency p99 over the last second.
func (g *Governor) Latency() time.Duration { return time.Duration(g.p99.Load()) }

// Capacity is the redirect's measured capacity: the most requests it served
// in a second while scheduling latency was at the threshold (0 until then).
func (g *Governor) Capacity() int64 { return g.capacity.Load() }

// Run samples every Tick until ctx ends.
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
	h := g.source()
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.hits.Load()
	d := now - g.lastHits
	g.lastHits = now
	g.hitSum += d - g.hitRing[g.pos]
	g.hitRing[g.pos] = d

	counts := append([]uint64(nil), h.Counts...)
	old := g.ring[g.pos] // the snapshot of one window ago (nil at first)
	g.ring[g.pos] = counts
	g.pos = (g.pos + 1) % windowTicks
	g.buckets = h.Buckets
	if len(old) != len(counts) {
		old = make([]uint64, len(counts))
	}
	p99, n := percentile(counts, old, h.Buckets, 0.99)
	g.p99.Store(int64(p99 * float64(time.Second)))
	slow := n >= minSamples && p99 >= g.threshold && g.hitSum >= minRedirects
	if slow && g.hitSum > g.capacity.Load() {
		g.capacity.Store(g.hitSum)
	}
	g.contended.Store(slow)
	g.busy.Store(slow && float64(g.hitSum) >= CapacityShare*float64(g.capacity.Load()))
}

// percentile returns the q-quantile of the observations between two
// cumulative snapshots (the bucket's lower bound, so a percentile is never
// overstated) and how many there were.
func percentile(now, then []uint64, buckets []float64, q float64) (float64, uint64) {
	var n uint64
	for i := range now {
		n += now[i] - then[i]
	}
	if n == 0 {
		return 0, 0
	}
	rank := uint64(q * float64(n))
	var seen uint64
	for i := range now {
		seen += now[i] - then[i]
		if seen > rank {
			return max(0, buckets[i]), n
		}
	}
	return buckets[len(buckets)-2], n
}

// Controlled is a latency source whose latency is set by hand, for tests
// of the work that yields: every read adds N observations of the latency
// last Set, so a governor over it turns saturated or calm as a real one
// would, window and all.
type Controlled struct {
	N      uint64 // observations per read; 0 means minSamples
	mu     sync.Mutex
	at     time.Duration
	counts []uint64
}

// controlledBuckets are the source's bucket bounds, in seconds.
var controlledBuckets = []float64{0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100}

// Set makes later reads observe d.
func (c *Controlled) Set(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = d
}

// Read is the LatencySource.
func (c *Controlled) Read() *Histogram {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = make([]uint64, len(controlledBuckets)-1)
	}
	i := 0
	for i+1 < len(c.counts) && c.at.Seconds() >= controlledBuckets[i+1] {
		i++
	}
	n := c.N
	if n == 0 {
		n = minSamples
	}
	c.counts[i] += n
	return &Histogram{Counts: append([]uint64(nil), c.counts...), Buckets: controlledBuckets}
}

// SaturatedGovernor returns a governor that is saturated now, and the
// source that makes it calm again (Set(0), then windowTicks Samples).
func SaturatedGovernor() (*Governor, *Controlled) {
	src := &Controlled{}
	src.Set(time.Second)
	g := NewGovernorFrom(time.Millisecond, src.Read)
	for range minRedirects {
		g.Hit()
	}
	g.Sample()
	return g, src
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
