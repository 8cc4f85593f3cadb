package api_test

import (
	"context"
	"io"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/api"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// limitedKey mints a key with the given limit and scopes (links:read when
// none) and returns its id and token.
func limitedKey(t *testing.T, srv *testkit.Server, ws uuid.UUID, perMinute int, scopes ...string) (uuid.UUID, string) {
	t.Helper()
	if len(scopes) == 0 {
		scopes = []string{"links:read"}
	}
	k, token, err := srv.App.Keys.Create(context.Background(), ws, nil, apikey.CreateInput{Name: "limited", Scopes: scopes, RateLimitPerMinute: &perMinute})
	if err != nil {
		t.Fatal(err)
	}
	return k.ID, token
}

// rl is a response's RateLimit-* headers, -1 when absent.
type rl struct{ limit, remaining, reset, retryAfter int }

func rateHeaders(resp *http.Response) rl {
	num := func(name string) int {
		v := resp.Header.Get(name)
		if v == "" {
			return -1
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return -2
		}
		return n
	}
	return rl{num("RateLimit-Limit"), num("RateLimit-Remaining"), num("RateLimit-Reset"), num("Retry-After")}
}

// status reads and closes resp, returning its status and rate headers.
func status(resp *http.Response) (int, rl) {
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, rateHeaders(resp)
}

// secondsWithin reports whether a whole-seconds header is want, less at
// most the (rounded up) time since start: the clock runs between requests.
func secondsWithin(got, want int, start time.Time) bool {
	slack := int(math.Ceil(time.Since(start).Seconds()))
	return got <= want && got >= want-slack
}

func TestRateLimitCountsDownThen429(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	_, token := limitedKey(t, srv, tn.WorkspaceID, 3) // one request every 20 s
	start := time.Now()
	for i := range 3 {
		code, h := status(srv.Do(t, "GET", "/api/v1/workspace", token, ""))
		if code != 200 || h.limit != 3 || h.remaining != 2-i || !secondsWithin(h.reset, 20*(i+1), start) || h.retryAfter != -1 {
			t.Fatalf("request %d: %d %+v, want 200, limit 3, remaining %d, reset %d s", i+1, code, h, 2-i, 20*(i+1))
		}
	}
	resp := srv.Do(t, "GET", "/api/v1/workspace", token, "")
	h := rateHeaders(resp)
	p := testkit.Problem(t, resp, 429, "rate-limited")
	if h.limit != 3 || h.remaining != 0 || !secondsWithin(h.reset, 60, start) || !secondsWithin(h.retryAfter, 20, start) || h.retryAfter < 1 {
		t.Fatalf("429 headers %+v, want limit 3, remaining 0, reset 60 s, Retry-After 20 s", h)
	}
	if d := p["detail"].(string); !strings.Contains(d, "3 requests per minute") {
		t.Errorf("429 detail %q", d)
	}
}

func TestRateLimitHeadersOnEveryAuthenticatedResponse(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	// 8 a minute: one every 7.5 s, so the count does not refill during the test.
	_, token := limitedKey(t, srv, tn.WorkspaceID, 8)
	charged := []struct {
		name, method, path, body string
		status                   int
	}{
		{"200", "GET", "/api/v1/workspace", "", 200},
		{"404 unknown id", "GET", "/api/v1/links/lnk_00000000000000000000000000", "", 404},
		{"403 insufficient scope", "POST", "/api/v1/links", `{"target_url":"https://example.com"}`, 403},
		{"422 bad query", "GET", "/api/v1/links?limit=0", "", 422},
		{"400 bad cursor", "GET", "/api/v1/links?cursor=nonsense", "", 400},
	}
	for i, c := range charged {
		code, h := status(srv.Do(t, c.method, c.path, token, c.body))
		if code != c.status || h.limit != 8 || h.remaining != 7-i || h.reset < 1 {
			t.Errorf("%s: %d %+v, want %d with limit 8 and %d remaining", c.name, code, h, c.status, 7-i)
		}
	}

	// Unauthenticated answers cost nothing and carry no headers.
	_, ipLocked, err := srv.App.Keys.Create(context.Background(), tn.WorkspaceID, nil, apikey.CreateInput{Name: "k", Scopes: []string{"links:read"}, IPAllowlist: []string{"192.0.2.1"}})
	if err != nil {
		t.Fatal(err)
	}
	for name, req := range map[string][2]string{
		"401":                {"/api/v1/workspace", ""},
		"404 unknown route":  {"/api/v1/nope", token},
		"403 ip-not-allowed": {"/api/v1/workspace", ipLocked},
	} {
		if _, h := status(srv.Do(t, "GET", req[0], req[1], "")); h.limit != -1 || h.remaining != -1 || h.reset != -1 {
			t.Errorf("%s carries rate-limit headers: %+v", name, h)
		}
	}
	if _, h := status(srv.Do(t, "GET", "/api/v1/workspace", token, "")); h.remaining != 7-len(charged) {
		t.Errorf("remaining %d after the unauthenticated requests, want %d: they were charged", h.remaining, 7-len(charged))
	}

	// Nothing outside /api/v1 is limited by this.
	code := "rl" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	testkit.Link(t, srv.Pool, &testkit.LinkOpts{WorkspaceID: tn.WorkspaceID, Code: code})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/" + code, "/healthz", "/readyz", "/docs", "/login", "/openapi.json"} {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if st, h := status(resp); st >= 400 || h.limit != -1 {
			t.Errorf("%s: %d %+v, want a success without rate-limit headers", path, st, h)
		}
	}
}

func TestRateLimit429IsNotStoredUnderIdempotencyKey(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	_, token := limitedKey(t, srv, tn.WorkspaceID, 2, "links:read", "links:write")
	body := `{"target_url":"https://example.com/rate"}`
	post := func(idemKey string) *http.Response {
		return srv.Do(t, "POST", "/api/v1/links", token, body, "Idempotency-Key", idemKey)
	}
	first := post("k1")
	created, _ := io.ReadAll(first.Body)
	first.Body.Close()
	if first.StatusCode != 201 || rateHeaders(first).remaining != 1 {
		t.Fatalf("create: %d %+v", first.StatusCode, rateHeaders(first))
	}
	replay := post("k1")
	if code, h := status(replay); code != 201 || replay.Header.Get("Idempotent-Replayed") != "true" || h.limit != 2 || h.remaining != 0 {
		t.Fatalf("replay: %d %+v replayed=%q; a replay is charged and carries the current headers", code, h, replay.Header.Get("Idempotent-Replayed"))
	}
	limited := post("k1")
	if limited.Header.Get("Idempotent-Replayed") != "" {
		t.Error("a 429 claims to be a replay")
	}
	testkit.Problem(t, limited, 429, "rate-limited")
	// The limit is checked before the Idempotency-Key is even parsed.
	testkit.Problem(t, post(strings.Repeat("x", 300)), 429, "rate-limited")

	// Idempotency-Keys belong to the workspace: another key of it, with room
	// in its own budget, gets the original response replayed, not the 429.
	_, other := limitedKey(t, srv, tn.WorkspaceID, 2, "links:read", "links:write")
	again := srv.Do(t, "POST", "/api/v1/links", other, body, "Idempotency-Key", "k1")
	got, _ := io.ReadAll(again.Body)
	again.Body.Close()
	if again.StatusCode != 201 || again.Header.Get("Idempotent-Replayed") != "true" || string(got) != string(created) {
		t.Fatalf("after the 429: %d replayed=%q %s, want the stored 201", again.StatusCode, again.Header.Get("Idempotent-Replayed"), got)
	}
	list := testkit.JSON(t, srv.Do(t, "GET", "/api/v1/links", other, ""), 200)
	if n := len(list["data"].([]any)); n != 1 {
		t.Fatalf("%d links, want 1", n)
	}
}

// burst sends n concurrent GET /api/v1/workspace, spread over the servers,
// and counts the answers by status.
func burst(t *testing.T, token string, n int, servers ...*testkit.Server) map[int]int {
	t.Helper()
	var mu sync.Mutex
	counts := map[int]int{}
	var ready, done sync.WaitGroup
	ready.Add(1)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: n}}
	for i := range n {
		srv := servers[i%len(servers)]
		done.Go(func() {
			req, _ := http.NewRequest("GET", srv.URL+"/api/v1/workspace", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			ready.Wait()
			resp, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			code, h := status(resp)
			if h.limit < 1 || (code == 429 && h.retryAfter < 1) {
				t.Errorf("%d without rate-limit headers: %+v", code, h)
			}
			mu.Lock()
			counts[code]++
			mu.Unlock()
		})
	}
	ready.Done()
	done.Wait()
	return counts
}

func TestRateLimitBurstOnOneKey(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	// 5 a minute: one every 12 s, far longer than the burst takes.
	_, token := limitedKey(t, srv, tn.WorkspaceID, 5)
	// One request first: a key's first use runs argon2id.
	if code, _ := status(srv.Do(t, "GET", "/api/v1/workspace", token, "")); code != 200 {
		t.Fatalf("first request %d", code)
	}
	counts := burst(t, token, 200, srv)
	if counts[200] != 4 || counts[429] != 196 {
		t.Fatalf("200 concurrent requests on a key of 5 (1 used): %v, want 4×200 and 196×429", counts)
	}
}

func TestRateLimitSharedAcrossInstancesThroughRedis(t *testing.T) {
	t.Parallel()
	// A generous Redis timeout: under the race detector on a busy machine a
	// burst of 200 requests can starve a goroutine past the default 250 ms,
	// and the falling back in-process that follows (tested elsewhere) is
	// exactly what this test must rule out to prove the budget is shared.
	url := testkit.RedisURL(t) + "?read_timeout=10s"
	a := testkit.StartServer(t, testkit.WithEnv("LINKQR_REDIS_URL", url))
	b := testkit.StartServer(t, testkit.WithPool(a.Pool), testkit.WithEnv("LINKQR_REDIS_URL", url))
	tn := testkit.NewTenant(t, a.Pool)

	_, token := limitedKey(t, a, tn.WorkspaceID, 4)
	start := time.Now()
	for i, srv := range []*testkit.Server{a, b, a, b} {
		code, h := status(srv.Do(t, "GET", "/api/v1/workspace", token, ""))
		if code != 200 || h.limit != 4 || h.remaining != 3-i || !secondsWithin(h.reset, 15*(i+1), start) {
			t.Fatalf("request %d: %d %+v, want 200 with %d remaining of one budget of 4", i+1, code, h, 3-i)
		}
	}
	for _, srv := range []*testkit.Server{a, b} {
		resp := srv.Do(t, "GET", "/api/v1/workspace", token, "")
		if h := rateHeaders(resp); !secondsWithin(h.retryAfter, 15, start) || h.retryAfter < 1 || h.remaining != 0 {
			t.Errorf("429 headers %+v, want Retry-After 15 s", h)
		}
		testkit.Problem(t, resp, 429, "rate-limited")
	}

	_, token = limitedKey(t, a, tn.WorkspaceID, 6) // one every 10 s
	for _, srv := range []*testkit.Server{a, b} {  // argon2id once per instance
		if code, _ := status(srv.Do(t, "GET", "/api/v1/workspace", token, "")); code != 200 {
			t.Fatalf("first use: %d", code)
		}
	}
	if counts := burst(t, token, 200, a, b); counts[200] != 4 || counts[429] != 196 {
		t.Fatalf("200 concurrent requests over two instances on a key of 6 (2 used): %v, want 4×200 and 196×429", counts)
	}
	for _, srv := range []*testkit.Server{a, b} {
		if fb := metric(t, srv, "linkqr_ratelimit_redis_fallbacks_total"); fb != 0 {
			t.Errorf("%v decisions were made in-process", fb)
		}
	}
}

// metric reads one unlabelled sample from a server's /metrics.
func metric(t *testing.T, srv *testkit.Server, name string) float64 {
	t.Helper()
	resp := testkit.Get(t, srv.MetricsURL+"/metrics", nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("/metrics has no %s", name)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRateLimitSurvivesRedisOutage(t *testing.T) {
	t.Parallel()
	redis := testkit.StartRedis(t)
	a := testkit.StartServer(t, testkit.WithEnv("LINKQR_REDIS_URL", redis.URL))
	b := testkit.StartServer(t, testkit.WithPool(a.Pool), testkit.WithEnv("LINKQR_REDIS_URL", redis.URL))
	tn := testkit.NewTenant(t, a.Pool)
	get := func(srv *testkit.Server, token string) (int, rl) {
		return status(srv.Do(t, "GET", "/api/v1/workspace", token, ""))
	}
	// shared reports whether a and b draw from one budget of 2.
	shared := func() bool {
		_, token := limitedKey(t, a, tn.WorkspaceID, 2)
		ca, _ := get(a, token)
		cb, _ := get(b, token)
		c3, _ := get(a, token)
		if ca != 200 || cb != 200 {
			t.Fatalf("first two requests of a budget of 2: %d, %d", ca, cb)
		}
		return c3 == 429
	}
	if !shared() {
		t.Fatal("the instances do not share the budget while Redis is up")
	}

	redis.Stop()
	_, token := limitedKey(t, a, tn.WorkspaceID, 2)
	for i, want := range []int{200, 200, 429} {
		if code, h := get(a, token); code != want || h.limit != 2 {
			t.Fatalf("request %d during the outage: %d %+v, want %d (limited in-process)", i+1, code, h, want)
		}
	}
	if code, _ := get(b, token); code != 200 {
		t.Fatalf("b during the outage: %d; it limits on its own budget", code)
	}
	if resp := testkit.Get(t, a.URL+"/readyz", nil); resp.StatusCode != 200 {
		t.Errorf("/readyz %d during the Redis outage, want 200", resp.StatusCode)
	}
	if up, fb, errs := metric(t, a, "linkqr_ratelimit_redis_up"), metric(t, a, "linkqr_ratelimit_redis_fallbacks_total"), metric(t, a, "linkqr_ratelimit_redis_errors_total"); up != 0 || fb < 3 || errs < 1 {
		t.Errorf("metrics during the outage: up %v, fallbacks %v, errors %v", up, fb, errs)
	}

	redis.Start()
	// Each instance tries Redis again about once a second, on a request.
	_, probe := limitedKey(t, a, tn.WorkspaceID, apikey.MaxRateLimit)
	for _, srv := range []*testkit.Server{a, b} {
		wait.For(t, 15*time.Second, func() bool {
			if metric(t, srv, "linkqr_ratelimit_redis_up") == 1 {
				return true
			}
			get(srv, probe) // the retry happens on a request
			return false
		}, "an instance to go back to Redis")
	}
	if !shared() {
		t.Fatal("the instances do not share the budget again after Redis returned")
	}
}

// The document promises the headers on every operation: required on each
// success and on the 429, documented on every error that can be answered
// after authentication (all but 401).
func TestOpenAPIRateLimitHeaders(t *testing.T) {
	t.Parallel()
	names := []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"}
	for path, item := range api.Spec().Paths.Map() {
		for method, op := range item.Operations() {
			if op.Responses.Value("429") == nil || op.Responses.Value("429").Value.Headers["Retry-After"] == nil ||
				!op.Responses.Value("429").Value.Headers["Retry-After"].Value.Required {
				t.Errorf("%s %s: no 429 with a required Retry-After", method, path)
			}
			for code, ref := range op.Responses.Map() {
				for _, name := range names {
					h := ref.Value.Headers[name]
					switch {
					case code == "401":
						if h != nil {
							t.Errorf("%s %s %s: documents %s, which is not sent", method, path, code, name)
						}
					case h == nil:
						t.Errorf("%s %s %s: does not document %s", method, path, code, name)
					case (code < "400" || code == "429") && !h.Value.Required:
						t.Errorf("%s %s %s: %s is sent on every such response; mark it required", method, path, code, name)
					}
				}
			}
		}
	}
}
