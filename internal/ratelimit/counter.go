package ratelimit

import (
	"context"
	"sync"
	"time"
)

// Window is a count of events under a limit: at most Limit events in a
// window of Length that starts with its first event (a fixed window, not
// GCRA's smooth refill: a password link's guesses or an instance's
// registrations are refused until the window ends, then counted afresh).
type Window struct {
	// Key names the count. The keys of one Take must share a Redis Cluster
	// hash tag ("…{link-id}…") when Redis is a cluster: a Take is one
	// script over all of them.
	Key    string
	Limit  int
	Length time.Duration
}

// Counter counts events in windows: Counts in-process, Redis across
// instances (with Counts while Redis is away).
type Counter interface {
	// Take counts one event in every window, or in none when one of them
	// is full: full is the index of the first full window (-1 when the
	// event was counted) and wait how long until that window ends. It
	// returns an error only when ctx ends first.
	Take(ctx context.Context, windows ...Window) (full int, wait time.Duration, err error)
	// Give takes back one event that Take counted in each window (a
	// right password is not a guess against anyone); a count never goes
	// below zero, and a window that ended meanwhile is left alone. It
	// returns an error only when ctx ends first.
	Give(ctx context.Context, windows ...Window) error
}

// maxCounts bounds the in-process counts; past it, ended windows are
// swept (and, failing that, all of them: an attacker filling the map
// with distinct keys resets counts rather than taking memory).
const maxCounts = 100_000

// Counts is the in-process Counter: exact within one instance.
type Counts struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*count
}

type count struct {
	n      int
	since  time.Time
	length time.Duration
}

// NewCounts returns in-process counts reading time from now (time.Now
// when nil; tests pass a fake clock).
func NewCounts(now func() time.Time) *Counts {
	if now == nil {
		now = time.Now
	}
	return &Counts{now: now, m: map[string]*count{}}
}

// Take implements Counter; it never returns an error.
func (c *Counts) Take(_ context.Context, windows ...Window) (int, time.Duration, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for i, w := range windows {
		if k := c.window(w, now); k.n >= w.Limit {
			return i, k.since.Add(k.length).Sub(now), nil
		}
	}
	for _, w := range windows {
		c.window(w, now).n++
	}
	return -1, 0, nil
}

// Give implements Counter; it never returns an error.
func (c *Counts) Give(_ context.Context, windows ...Window) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for _, w := range windows {
		if k := c.m[w.Key]; k != nil && now.Sub(k.since) < k.length && k.n > 0 {
			k.n--
		}
	}
	return nil
}

// charge counts one event in every window whatever their limits: what
// Redis counted, so that this instance alone stays within the limits
// when Redis goes away.
func (c *Counts) charge(windows ...Window) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for _, w := range windows {
		c.window(w, now).n++
	}
}

// window returns w's current window (a new one when it ended); mu held.
func (c *Counts) window(w Window, now time.Time) *count {
	k := c.m[w.Key]
	if k == nil || now.Sub(k.since) >= k.length {
		if len(c.m) >= maxCounts {
			c.sweep(now)
		}
		k = &count{since: now, length: w.Length}
		c.m[w.Key] = k
	}
	return k
}

// sweep drops ended windows; mu held.
func (c *Counts) sweep(now time.Time) {
	for key, k := range c.m {
		if now.Sub(k.since) >= k.length {
			delete(c.m, key)
		}
	}
	if len(c.m) >= maxCounts {
		clear(c.m)
	}
}
