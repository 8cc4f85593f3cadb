package scan

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// The crash bound (docs/scan-pipeline.md): a hard crash loses the scans
// whose redirects were answered but that were not yet committed, so the
// recorder admits at most as many of those as the redirects of the last
// CrashWindow at the current rate, and a redirect past that waits for a
// write to commit (backpressure) instead of adding to what a crash would
// lose. The rate is counted over the last second; MinUnwritten keeps a
// quiet instance (and one warming up) from waiting on every write.
const (
	CrashWindow  = 100 * time.Millisecond
	MinUnwritten = 16
	// admitShare is the part of CrashWindow's hits actually admitted (in
	// tenths): the rest is margin for what the last second's rate cannot
	// see — a rate that rose within the second, answers already counted
	// here and still on their way to the client. With all ten tenths,
	// TestSIGKILLUnderLoadLosesAtMost100ms measured losses of 369 against
	// a bound of 370 on a contended machine.
	admitShare = 8
)

// rateBuckets split the last second into CrashWindow-long buckets.
const rateBuckets = int(time.Second / CrashWindow)

// unwritten counts the hits answered but not yet written, bounded by the
// rate of the last second.
type unwritten struct {
	mu    sync.Mutex
	n     int           // admitted and not released
	freed chan struct{} // closed (and replaced) when hits are released
	// counts[i] is how many hits were admitted in the CrashWindow that
	// began at start - i windows; start is the current window's start.
	counts [rateBuckets]int
	start  time.Time
	now    func() time.Time
	// waits and waited count the hits that had to wait for a write to
	// commit, and for how long in all (nanoseconds): the backpressure.
	waits, waited atomic.Int64
	// hurry is closed while a hit waits at the bound, and replaced by the
	// next release: the writers then write what they hold at once instead
	// of gathering a fuller batch (hurried, Recorder.writeLoop). It is
	// closed and replaced under mu; the writers read it without.
	hurry atomic.Pointer[chan struct{}]
}

func newUnwritten() *unwritten {
	u := &unwritten{freed: make(chan struct{}), now: time.Now}
	u.hurry.Store(new(make(chan struct{})))
	return u
}

// hurried is closed while a hit waits at the bound for a write.
func (u *unwritten) hurried() <-chan struct{} { return *u.hurry.Load() }

// limit is how many may be unwritten at once: admitShare tenths of the
// hits of one CrashWindow at the rate of the last second, at least
// MinUnwritten. Its caller holds mu.
func (u *unwritten) limit() int {
	u.advance()
	sum := 0
	for _, c := range u.counts {
		sum += c
	}
	return max(MinUnwritten, sum*admitShare/(rateBuckets*10))
}

// advance moves the buckets to the current window. Its caller holds mu.
func (u *unwritten) advance() {
	now := u.now()
	if u.start.IsZero() {
		u.start = now
		return
	}
	steps := int(now.Sub(u.start) / CrashWindow)
	if steps <= 0 {
		return
	}
	if steps >= rateBuckets {
		u.counts = [rateBuckets]int{}
	} else {
		copy(u.counts[steps:], u.counts[:rateBuckets-steps])
		clear(u.counts[:steps])
	}
	u.start = u.start.Add(time.Duration(steps) * CrashWindow)
}

// acquire admits one hit, waiting while the bound is reached; it fails
// only when ctx ends.
func (u *unwritten) acquire(ctx context.Context) error {
	var since time.Time // when this hit began to wait; zero while it has not
	for {
		u.mu.Lock()
		if u.n < u.limit() {
			u.n++
			u.counts[0]++
			u.mu.Unlock()
			u.count(since)
			return nil
		}
		if since.IsZero() {
			since = u.now()
		}
		if hurry := *u.hurry.Load(); !isClosed(hurry) {
			close(hurry)
		}
		freed := u.freed
		u.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			u.count(since)
			return ctx.Err()
		}
	}
}

// count adds a hit that began to wait at since (zero: it did not) to the
// backpressure.
func (u *unwritten) count(since time.Time) {
	if !since.IsZero() {
		u.waits.Add(1)
		u.waited.Add(int64(u.now().Sub(since)))
	}
}

// isClosed says whether ch is closed (it is never sent on).
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// backpressure is how many hits waited at the bound, and how long in all.
func (u *unwritten) backpressure() (waits int64, waited time.Duration) {
	return u.waits.Load(), time.Duration(u.waited.Load())
}

// release says k admitted hits were written (or handed to the outage
// buffer, where redirects must not wait for them).
func (u *unwritten) release(k int) {
	if k <= 0 {
		return
	}
	u.mu.Lock()
	u.n = max(0, u.n-k)
	close(u.freed)
	u.freed = make(chan struct{})
	if isClosed(*u.hurry.Load()) {
		u.hurry.Store(new(make(chan struct{})))
	}
	u.mu.Unlock()
}

// held is how many hits are admitted and not released.
func (u *unwritten) held() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.n
}
