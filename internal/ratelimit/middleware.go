package ratelimit

import (
	"log/slog"
	"net/http"
	"net/textproto"
	"strconv"
	"time"

	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/requestid"
)

// Response headers (docs/api.md#rate-limits).
const (
	HeaderLimit      = "RateLimit-Limit"
	HeaderRemaining  = "RateLimit-Remaining"
	HeaderReset      = "RateLimit-Reset"
	HeaderRetryAfter = "Retry-After"
)

// Middleware charges each request to its credential's budget before the
// handler runs. It sets the RateLimit-* headers on the response before
// calling the next handler, so every answer after it — 2xx, a 403 for a
// missing scope, a 404, a replayed idempotent response — carries them; an
// exhausted budget is a 429 rate-limited problem with Retry-After, written
// before any idempotency work, so it is never stored under a key.
type Middleware struct {
	Limiter  Limiter
	Problems problem.Writer
	Log      *slog.Logger
	// Subject names the budget a request draws from and its current limit;
	// ok is false when the request carries no credential, which is a wiring
	// error behind authentication (answered 500).
	Subject func(r *http.Request) (key string, perMinute int, ok bool)
}

// Handler wraps next.
func (m *Middleware) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, perMinute, ok := m.Subject(r)
		if !ok {
			m.Log.Error("rate limiter reached without a credential", "request_id", requestid.FromContext(r.Context()), "path", r.URL.Path)
			m.Problems.Write(w, r, problem.New(problem.Internal, "an internal error occurred; quote request_id when contacting support"))
			return
		}
		res, err := m.Limiter.Allow(r.Context(), key, perMinute)
		if err != nil {
			m.Problems.Write(w, r, problem.New(problem.Unavailable, "the request could not be processed right now; retry shortly"))
			return
		}
		SetHeaders(w.Header(), res)
		if !res.Allowed {
			retry := RetryAfterSeconds(res.RetryAfter)
			w.Header().Set(HeaderRetryAfter, strconv.Itoa(retry))
			m.Problems.Write(w, r, problem.New(problem.RateLimited, "the rate limit of "+strconv.Itoa(res.Limit)+
				" requests per minute is exhausted; retry in "+plural(retry, "second")))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// The header names in canonical form, computed once: http.Header.Set would
// canonicalise (and allocate) "RateLimit-…" again on every request.
var (
	keyLimit     = textproto.CanonicalMIMEHeaderKey(HeaderLimit)
	keyRemaining = textproto.CanonicalMIMEHeaderKey(HeaderRemaining)
	keyReset     = textproto.CanonicalMIMEHeaderKey(HeaderReset)
)

// SetHeaders writes RateLimit-Limit, -Remaining and -Reset (whole seconds
// until the full budget is back, rounded up) for res.
func SetHeaders(h http.Header, res Result) {
	h[keyLimit] = []string{strconv.Itoa(res.Limit)}
	h[keyRemaining] = []string{strconv.Itoa(res.Remaining)}
	h[keyReset] = []string{strconv.Itoa(ceilSeconds(res.ResetAfter))}
}

// RetryAfterSeconds is d in whole seconds, rounded up and at least 1: a
// client that waits that long is allowed again.
func RetryAfterSeconds(d time.Duration) int { return max(ceilSeconds(d), 1) }

func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Second - 1) / time.Second)
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// Limit is the per-minute budget of r's credential (0 without one).
func (m *Middleware) Limit(r *http.Request) int {
	_, perMinute, _ := m.Subject(r)
	return max(perMinute, 1)
}

// Charge takes cost more requests from the budget of r's credential, for
// a request whose price is known only once its body is read (a bulk
// creation costs one request plus its items). It sets the RateLimit-*
// headers again and returns nil, or the problem to answer: 429 with
// Retry-After when the budget cannot cover the cost now (nothing is
// taken; the headers keep what the request itself left), 503 when the
// limiter failed. A cost above Limit never fits; the
// caller refuses it first, saying why.
func (m *Middleware) Charge(w http.ResponseWriter, r *http.Request, cost int) error {
	if cost < 1 {
		return nil
	}
	key, perMinute, _ := m.Subject(r)
	res, err := m.Limiter.AllowN(r.Context(), key, perMinute, cost)
	if err != nil {
		return problem.New(problem.Unavailable, "the request could not be processed right now; retry shortly")
	}
	if !res.Allowed { // the headers set before the handler still tell what is left
		retry := RetryAfterSeconds(res.RetryAfter)
		w.Header().Set(HeaderRetryAfter, strconv.Itoa(retry))
		return problem.New(problem.RateLimited, "this request costs "+strconv.Itoa(cost)+" more of the rate limit's "+strconv.Itoa(res.Limit)+
			" requests per minute than are left; retry in "+plural(retry, "second"))
	}
	SetHeaders(w.Header(), res)
	return nil
}
