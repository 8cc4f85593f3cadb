package scan

import (
	"context"
	"sync"
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
}

func newUnwritten() *unwritten {
	return &unwritten{freed: make(chan struct{}), now: time.Now}
}

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
	for {
		u.mu.Lock()
		if u.n < u.limit() {
			u.n++
			u.counts[0]++
			u.mu.Unlock()
			return nil
		}
		freed := u.freed
		u.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
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
	u.mu.Unlock()
}

// held is how many hits are admitted and not released.
func (u *unwritten) held() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.n
}
