package app

import (
	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/ratelimit"
)

// openRateLimiter builds the per-credential rate limiter of /api/v1 and
// the counts of password guesses and OAuth registrations: in-process, or
// shared through Redis when LINKQR_REDIS_URL is set. Redis is not needed
// to serve (readiness ignores it): while it is unreachable each instance
// limits and counts on its own, and the outage shows in /metrics.
func (a *App) openRateLimiter() error {
	local, counts := ratelimit.NewLocal(nil), ratelimit.NewCounts(nil)
	a.RateLimiter, a.Counter = local, counts
	if a.Config.RedisURL == "" {
		return nil
	}
	client, err := ratelimit.NewClient(a.Config.RedisURL)
	if err != nil {
		return err
	}
	shared := ratelimit.NewRedis(client, ratelimit.RedisOptions{Log: a.Log, Fallback: local, Counts: counts})
	a.RateLimiter, a.Counter, a.closeRateLimiter = shared, shared, func() { _ = shared.Close() }
	a.Log.Info("rate limits and counts are shared through Redis", "redis", client.Options().Addr)

	a.Metrics.GaugeFunc("linkqr_ratelimit_redis_up", "1 while the last rate-limit or count call to Redis succeeded, 0 while limits and counts are enforced per instance.", func() float64 {
		if shared.Stats().Up {
			return 1
		}
		return 0
	})
	a.Metrics.Total("linkqr_ratelimit_redis_errors_total", "Rate-limit and count calls to Redis that failed or timed out.",
		func() float64 { return float64(shared.Stats().Errors) })
	a.Metrics.Total("linkqr_ratelimit_redis_fallbacks_total", "Rate-limit decisions and counts made in-process because Redis was unavailable.",
		func() float64 { return float64(shared.Stats().Fallbacks) })
	return nil
}

// rateLimit is the /api/v1 middleware charging each request to its
// credential (auth.RateLimitSubject).
func (a *App) rateLimit() *ratelimit.Middleware {
	return &ratelimit.Middleware{Limiter: a.RateLimiter, Problems: a.problems, Log: a.Log, Subject: auth.RateLimitSubject}
}
