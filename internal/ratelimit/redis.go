package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Defaults of NewClient and RedisOptions.
const (
	// DefaultTimeout bounds one Redis decision, waiting for a connection
	// included; past it the request is decided in-process. A Redis round trip
	// takes well under a millisecond on a local network, so only a sick (or
	// starved) one gets near it. The read_timeout option of LINKQR_REDIS_URL
	// overrides it.
	DefaultTimeout = 250 * time.Millisecond
	// DefaultRetryInterval is how long Redis is left alone after a failure
	// before one request tries it again; meanwhile no request waits on it.
	DefaultRetryInterval = time.Second
)

// keyPrefix namespaces linkqr's budgets in a Redis that may be shared
// (redis_rate adds its own "rate:" in front).
const keyPrefix = "linkqr:"

// RedisOptions configure NewRedis.
type RedisOptions struct {
	Log *slog.Logger
	// Fallback decides while Redis is unavailable (a fresh Local when nil).
	// It is also charged with every request Redis allows, so that in an
	// outage this instance alone never exceeds a limit in the first minute
	// either.
	Fallback *Local
	// Counts decide the counts of Take while Redis is unavailable (fresh
	// Counts when nil), and count what Redis counted.
	Counts        *Counts
	Timeout       time.Duration    // the client's read timeout when zero (see NewClient)
	RetryInterval time.Duration    // DefaultRetryInterval when zero
	Now           func() time.Time // time.Now when nil; only schedules retries (Redis keeps the GCRA time)
}

// Redis is the limiter shared by every instance on one Redis. Decisions run
// go-redis/redis_rate's GCRA script (one round trip, atomic in Redis, using
// Redis's clock so instances' clocks need not agree). It is also the
// Counter shared by every instance (Take, Give: redis_counter.go).
type Redis struct {
	client   *redis.Client
	rate     *redis_rate.Limiter
	fallback *Local
	counts   *Counts
	log      *slog.Logger
	timeout  time.Duration
	retry    time.Duration
	now      func() time.Time

	// state counts transitions between up (even) and down (odd). A call
	// changes it only if no other call did since it started, so answers of
	// calls that were in flight when Redis went away (or came back) cannot
	// flip it back and forth: an outage is logged once, and its end once.
	state   atomic.Uint64
	retryAt atomic.Int64 // unix nanoseconds; while down, Redis is not tried before it
	probing atomic.Bool  // while down, one request at a time tries Redis

	errors    atomic.Uint64
	fallbacks atomic.Uint64
}

// Stats are the Redis limiter's counters, exported as metrics.
type Stats struct {
	// Up reports whether rate limits are shared through Redis right now.
	Up bool
	// Errors counts Redis calls that failed or timed out.
	Errors uint64
	// Fallbacks counts decisions made in-process because Redis was unavailable.
	Fallbacks uint64
}

// NewClient opens a go-redis client for url (redis://, rediss:// or
// unix://, with go-redis's query options) whose dial, read, write and pool
// timeouts are the URL's read_timeout, DefaultTimeout when it has none, and
// which never retries: a failed call falls back in-process instead. It does
// not connect yet.
func NewClient(url string) (*redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("LINKQR_REDIS_URL: %w", err)
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = DefaultTimeout
	}
	for _, d := range []*time.Duration{&opts.DialTimeout, &opts.WriteTimeout, &opts.PoolTimeout} {
		if *d <= 0 {
			*d = opts.ReadTimeout
		}
	}
	opts.ContextTimeoutEnabled = true
	opts.MaxRetries = -1
	opts.DialerRetries = 1
	opts.DisableIdentity = true
	opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	quietRedisLogs()
	return redis.NewClient(opts), nil
}

// NewRedis returns a limiter deciding through client.
func NewRedis(client *redis.Client, o RedisOptions) *Redis {
	r := &Redis{
		client: client, rate: redis_rate.NewLimiter(client), fallback: o.Fallback, counts: o.Counts, log: o.Log,
		timeout: o.Timeout, retry: o.RetryInterval, now: o.Now,
	}
	if r.fallback == nil {
		r.fallback = NewLocal(nil)
	}
	if r.counts == nil {
		r.counts = NewCounts(nil)
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.timeout <= 0 {
		r.timeout = client.Options().ReadTimeout
	}
	if r.retry <= 0 {
		r.retry = DefaultRetryInterval
	}
	if r.now == nil {
		r.now = time.Now
	}
	return r
}

func isDown(state uint64) bool { return state%2 == 1 }

// Allow implements Limiter. It returns an error only when ctx ends first.
func (r *Redis) Allow(ctx context.Context, key string, perMinute int) (Result, error) {
	return r.AllowN(ctx, key, perMinute, 1)
}

// AllowN implements Limiter. It returns an error only when ctx ends first.
func (r *Redis) AllowN(ctx context.Context, key string, perMinute, n int) (Result, error) {
	n = max(n, 1)
	state := r.state.Load()
	if isDown(state) {
		if r.now().UnixNano() < r.retryAt.Load() || !r.probing.CompareAndSwap(false, true) {
			return r.local(ctx, key, perMinute, n)
		}
		defer r.probing.Store(false)
	}
	limit, _, _ := emission(perMinute)
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	res, err := r.rate.AllowN(cctx, keyPrefix+key, redis_rate.PerMinute(limit), n)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err() // the client went away; not Redis's fault
		}
		r.failed(state, err)
		return r.local(ctx, key, perMinute, n)
	}
	r.answered(state)
	// The script computes in float seconds since 2017, whose rounding can
	// put the reset a few nanoseconds past the period; it never is.
	out := Result{Limit: limit, Allowed: res.Allowed > 0, Remaining: max(res.Remaining, 0), ResetAfter: min(max(res.ResetAfter, 0), Period)}
	if out.Allowed {
		_, _ = r.fallback.AllowN(ctx, key, perMinute, n)
	} else {
		out.RetryAfter = max(res.RetryAfter, 0)
	}
	return out, nil
}

// Stats returns the counters.
func (r *Redis) Stats() Stats {
	return Stats{Up: !isDown(r.state.Load()), Errors: r.errors.Load(), Fallbacks: r.fallbacks.Load()}
}

// Close closes the Redis client.
func (r *Redis) Close() error { return r.client.Close() }

func (r *Redis) local(ctx context.Context, key string, perMinute, n int) (Result, error) {
	r.fallbacks.Add(1)
	return r.fallback.AllowN(ctx, key, perMinute, n)
}

// answered records a call that started in state and succeeded: the end
// of an outage is logged once.
func (r *Redis) answered(state uint64) {
	if isDown(state) && r.state.CompareAndSwap(state, state+1) {
		r.log.Info("Redis answers again; rate limits and counts are shared across instances again")
	}
}

// failed records a failed call that started in state and schedules the
// next try; the outage is logged once, when it starts.
func (r *Redis) failed(state uint64, err error) {
	r.errors.Add(1)
	r.retryAt.Store(r.now().Add(r.retry).UnixNano())
	if !isDown(state) && r.state.CompareAndSwap(state, state+1) {
		r.log.Warn("Redis is unavailable; rate limits and counts are enforced by each instance on its own until it answers again",
			"err", err, "retry_every", r.retry.String())
	}
}

var quietOnce sync.Once

// quietRedisLogs stops go-redis from printing a line on every failed dial
// (it logs through a process-wide logger): an outage is logged once by
// Redis.failed, and counted in Stats.
func quietRedisLogs() {
	quietOnce.Do(func() { redis.SetLogger(discard{}) })
}

type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}
