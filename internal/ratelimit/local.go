package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// shards spreads keys over independent locks so that concurrent requests of
// different credentials do not queue behind one mutex.
const shards = 64

// sweepEvery is how many decisions a shard makes between sweeps of entries
// whose budget is full again (they are equivalent to absent ones).
const sweepEvery = 4096

// Local is the in-process GCRA limiter. It is exact under any concurrency:
// each decision reads and writes its key's timestamp under the shard's lock,
// so no more than the limit is ever allowed, however many requests race.
//
// It is a port of the arithmetic of go-redis/redis_rate's script (the Redis
// backend) to integer nanoseconds, rather than throttled/throttled's memstore:
// that store updates by compare-and-swap with a bounded number of retries and
// reports an error when a burst on one key exhausts them, and its headers
// would then be computed differently from the Redis backend's.
type Local struct {
	now    func() time.Time
	seed   maphash.Seed
	shards [shards]shard
}

type shard struct {
	mu    sync.Mutex
	tat   map[string]int64 // key → theoretical arrival time, unix nanoseconds
	calls int
}

// NewLocal returns an in-process limiter reading time from now (time.Now
// when nil; tests pass a fake clock).
func NewLocal(now func() time.Time) *Local {
	if now == nil {
		now = time.Now
	}
	l := &Local{now: now, seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].tat = map[string]int64{}
	}
	return l
}

// Allow implements Limiter; it never returns an error.
func (l *Local) Allow(ctx context.Context, key string, perMinute int) (Result, error) {
	return l.AllowN(ctx, key, perMinute, 1)
}

// AllowN implements Limiter; it never returns an error.
func (l *Local) AllowN(_ context.Context, key string, perMinute, n int) (Result, error) {
	limit, interval, burst := emission(perMinute)
	now := l.now().UnixNano()
	s := &l.shards[maphash.String(l.seed, key)%shards]

	s.mu.Lock()
	tat, ok := s.tat[key]
	if !ok || tat < now {
		tat = now
	}
	newTAT := tat + interval*int64(max(n, 1))
	diff := now - (newTAT - burst) // ≥ 0: the request fits in the burst tolerance
	if diff < 0 {
		s.mu.Unlock()
		return Result{Limit: limit, RetryAfter: time.Duration(-diff), ResetAfter: time.Duration(tat - now)}, nil
	}
	s.tat[key] = newTAT
	if s.calls++; s.calls >= sweepEvery {
		s.calls = 0
		for k, t := range s.tat {
			if t <= now {
				delete(s.tat, k)
			}
		}
	}
	s.mu.Unlock()
	return Result{Limit: limit, Allowed: true, Remaining: int(diff / interval), ResetAfter: time.Duration(newTAT - now)}, nil
}
