package ratelimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/ratelimit"
	"github.com/linkqr/linkqr/internal/testkit"
)

// The cost of one rate-limit decision per API request, in-process and
// through Redis (one EVALSHA round trip). `make bench` runs these with the
// test Redis that testenv starts; without LINKQR_TEST_REDIS_URL the Redis
// benchmarks skip loudly.

func BenchmarkLocalOneKey(b *testing.B) {
	benchDecisions(b, ratelimit.NewLocal(nil), 1)
}

func BenchmarkLocal1000Keys(b *testing.B) {
	benchDecisions(b, ratelimit.NewLocal(nil), 1000)
}

func BenchmarkRedisOneKey(b *testing.B) {
	benchDecisions(b, benchRedis(b), 1)
}

func BenchmarkRedis1000Keys(b *testing.B) {
	benchDecisions(b, benchRedis(b), 1000)
}

func benchRedis(b *testing.B) *ratelimit.Redis {
	b.Helper()
	r := newRedis(b, testkit.RedisURL(b), nil, 0)
	if _, err := r.Allow(context.Background(), uniqueKey(), 1); err != nil || !r.Stats().Up {
		b.Fatalf("Redis does not answer: %v %+v", err, r.Stats())
	}
	return r
}

// benchDecisions makes decisions from parallel goroutines (as concurrent
// requests do) over keys credentials at the highest limit, and fails when
// any was not made by the limiter under test.
func benchDecisions(b *testing.B, l ratelimit.Limiter, keys int) {
	prefix := uniqueKey()
	names := make([]string, keys)
	for i := range names {
		names[i] = prefix + strconv.Itoa(i)
	}
	var next atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := l.Allow(ctx, names[next.Add(1)%uint64(keys)], 100000); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	if r, ok := l.(*ratelimit.Redis); ok && r.Stats().Fallbacks != 0 {
		b.Fatalf("%d decisions fell back in-process; the figure is not Redis's", r.Stats().Fallbacks)
	}
}

// BenchmarkMiddleware is the whole per-request cost the API pays in-process:
// the decision plus the three RateLimit-* headers.
func BenchmarkMiddleware(b *testing.B) {
	clk := newClock()
	m := &ratelimit.Middleware{
		Limiter: ratelimit.NewLocal(clk.Now),
		Subject: func(*http.Request) (string, int, bool) { return "key_bench", 100000, true },
	}
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	req := httptest.NewRequest(http.MethodGet, "/api/v1/workspace", nil)
	w := &headerWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clk.Advance(time.Millisecond) // 1000/s, under the limit: every request allowed
		clear(w.h)
		h.ServeHTTP(w, req)
		if len(w.h) != 3 {
			b.Fatalf("headers %v", w.h)
		}
	}
}

// headerWriter is the least a ResponseWriter can be, so the benchmark
// measures the middleware and not a recorder.
type headerWriter struct{ h http.Header }

func (w *headerWriter) Header() http.Header         { return w.h }
func (w *headerWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *headerWriter) WriteHeader(int)             {}
