// Package ratelimit enforces each credential's requests-per-minute budget
// with GCRA (the generic cell rate algorithm): a budget of N per minute is a
// burst of N that refills at one request every 60/N seconds, so a client is
// never locked out for a whole fixed window, and a decision needs only one
// timestamp per credential ("theoretical arrival time").
//
// Two backends implement one algorithm with the same arithmetic, so the
// RateLimit-* headers mean the same whichever answered:
//
//   - Local, in-process, the default: a mutex-guarded map of timestamps.
//   - Redis, when LINKQR_REDIS_URL is set: go-redis/redis_rate's GCRA script,
//     so every instance draws from one budget. When Redis is unreachable or
//     slower than a short timeout, Redis answers from Local instead (each
//     instance then enforces the limit on its own), logs the outage once,
//     counts it (Stats), and goes back to Redis by itself once it answers.
//
// Middleware turns a decision into headers and a 429 problem.
//
// The package also keeps counts in fixed windows (Counter: Counts
// in-process, Redis across instances with the same fallback), for
// limits that are not a rate: a link's password guesses, an hour's OAuth
// registrations.
package ratelimit

import (
	"context"
	"time"
)

// Period is the window a limit is expressed in: rate_limit_per_minute.
const Period = time.Minute

// Result is one decision.
type Result struct {
	// Limit is the budget the decision was made with, per Period.
	Limit int
	// Allowed reports whether the request may proceed.
	Allowed bool
	// Remaining is how many more requests would be allowed right now.
	Remaining int
	// RetryAfter is, for a refused request, how long until one is allowed
	// again; zero for an allowed one.
	RetryAfter time.Duration
	// ResetAfter is how long until the whole budget is available again.
	ResetAfter time.Duration
}

// Limiter decides whether one more request of key fits its budget of
// perMinute requests a minute (values below 1 count as 1). The limit is
// passed on every call rather than stored, so a changed limit applies to the
// very next request; the key's recorded usage is kept across the change.
type Limiter interface {
	Allow(ctx context.Context, key string, perMinute int) (Result, error)
	// AllowN is Allow for a request that costs n (>= 1) requests of the
	// budget at once: all of them fit, or none is taken.
	AllowN(ctx context.Context, key string, perMinute, n int) (Result, error)
}

// emission is GCRA's spacing between requests for a limit, in nanoseconds;
// the burst tolerance is emission×limit, computed from the same integer so
// that exactly limit requests fit into an idle budget.
func emission(perMinute int) (limit int, interval, burst int64) {
	limit = max(perMinute, 1)
	interval = int64(Period) / int64(limit)
	return limit, interval, interval * int64(limit)
}
