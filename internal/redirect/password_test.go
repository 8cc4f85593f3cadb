package redirect_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/budget"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/testkit"
)

// from returns a client whose connections come from 127.0.0.<n>: a
// different source address on the loopback interface.
func from(n int) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(n))}}
	return &http.Client{
		Transport:     &http.Transport{DialContext: d.DialContext},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func guess(t *testing.T, c *http.Client, short, password string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), "POST", short, strings.NewReader(url.Values{"password": {password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", uaIPhone)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestPasswordGuessesLimitedPerLink: 60 wrong guesses from 20 addresses
// (3 each, under the per-address limit) get at most 20 judged (401), the
// rest 429 with Retry-After; then the right password, from an address
// that never guessed, is 429 too while the link's window lasts. Not
// parallel: argon2id's cap is the process's, shared with other tests.
func TestPasswordGuessesLimitedPerLink(t *testing.T) {
	f := newFixture(t)
	l := f.link(t, `{"target_url":"https://example.com/secret","password":"open sesame"}`)
	short := l["short_url"].(string)
	status := map[int]int{}
	for i := range 3 {
		for a := range 20 {
			resp := guess(t, from(10+a), short, "wrong-"+strconv.Itoa(a)+"-"+strconv.Itoa(i))
			if resp.StatusCode == 429 && resp.Header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
			status[resp.StatusCode]++
		}
	}
	if status[401] > 20 || status[401]+status[429] != 60 {
		t.Fatalf("answers %v: want at most 20 judged (401), the rest 429", status)
	}
	resp := guess(t, from(99), short, "open sesame")
	if resp.StatusCode != 429 {
		t.Fatalf("the right password while the link is throttled: %d, want 429", resp.StatusCode)
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 || s > 600 {
		t.Errorf("Retry-After %q, want the rest of the 10-minute window", resp.Header.Get("Retry-After"))
	}
}

// TestPasswordGuessCountedBeforeCheck: 100 concurrent wrong guesses from
// one address let at most the per-address limit (5) be judged; the others
// are refused (429, or 503 while argon2id is saturated) and none passes.
// Not parallel: it saturates the process's argon2id cap on purpose.
func TestPasswordGuessCountedBeforeCheck(t *testing.T) {
	f := newFixture(t)
	l := f.link(t, `{"target_url":"https://example.com/secret","password":"open sesame"}`)
	short := l["short_url"].(string)
	c := from(7)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		status = map[int]int{}
	)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := guess(t, c, short, "wrong-"+strconv.Itoa(i))
			mu.Lock()
			status[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if status[401] > 5 || status[401]+status[429]+status[503] != 100 {
		t.Fatalf("answers %v: want at most 5 judged (401), the rest 429 or 503", status)
	}
	if status[401] == 0 {
		t.Fatalf("answers %v: no guess was judged at all", status)
	}
}

// TestPasswordCheckTakesItsWorkspacesShare: a guess at a link's password
// is checked in the share of the link's workspace of the argon2id slots:
// while that workspace holds its share, the form answers 503 with
// Retry-After and counts nothing, and another workspace's link is judged
// at once. Not parallel: it replaces the process-wide limiter.
func TestPasswordCheckTakesItsWorkspacesShare(t *testing.T) {
	f := newFixture(t)
	other := testkit.NewTenant(t, f.srv.Pool)
	otherToken := f.srv.APIKey(t, other.WorkspaceID)
	mine := f.link(t, `{"target_url":"https://example.com/secret","password":"open sesame"}`)["short_url"].(string)
	theirs := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links", otherToken, `{"target_url":"https://example.com/theirs","password":"open sesame"}`), 201)["short_url"].(string)
	wsID := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/workspace", f.token, ""), 200)["id"].(string)
	mineWS, ok := id.Parse(id.Workspace, wsID)
	if !ok {
		t.Fatalf("workspace id %q", wsID)
	}

	limits := budget.Limits()
	limits[budget.Hash] = budget.Limit{Process: 2, Workspace: 1, RetryAfter: time.Second, What: "credential checks running"}
	l := secrethash.OnBudgets(budget.New(limits))
	defer secrethash.SetProcess(l)()
	held, err := l.Acquire(context.Background(), mineWS)
	if err != nil {
		t.Fatal(err)
	}
	resp := guess(t, from(21), mine, "open sesame")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("my link while my workspace holds its share: %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if resp := guess(t, from(21), theirs, "wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the other workspace's link: %d, want its guess judged (401)", resp.StatusCode)
	}
	held()
	if resp := guess(t, from(21), mine, "open sesame"); resp.StatusCode != http.StatusFound {
		t.Fatalf("my link once the share is free: %d, want 302", resp.StatusCode)
	}
}

// TestPasswordGuessesCountedAcrossInstances: two instances on one
// database and one Redis count a link's guesses together: 40 wrong
// guesses from 20 addresses, each address guessing once at each instance,
// get at most 20 judged (401) between them, not 20 each; then the right
// password is 429 at both. Not parallel: argon2id's cap is the process's.
func TestPasswordGuessesCountedAcrossInstances(t *testing.T) {
	redis := testkit.StartRedis(t)
	a := newFixture(t, testkit.WithEnv("LINKQR_REDIS_URL", redis.URL))
	b := testkit.StartServer(t, testkit.WithPool(a.srv.Pool), testkit.WithEnv("LINKQR_REDIS_URL", redis.URL))
	short := a.link(t, `{"target_url":"https://example.com/secret","password":"open sesame"}`)["short_url"].(string)
	at := map[*testkit.Server]string{a.srv: short, b: strings.Replace(short, a.srv.URL, b.URL, 1)}
	status := map[int]int{}
	for _, srv := range []*testkit.Server{a.srv, b} {
		for n := range 20 {
			resp := guess(t, from(30+n), at[srv], "wrong-"+strconv.Itoa(n))
			if resp.StatusCode == 429 && resp.Header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
			status[resp.StatusCode]++
		}
	}
	if status[401] > 20 || status[401]+status[429] != 40 {
		t.Fatalf("answers %v: want at most 20 judged (401) by both instances together, the rest 429", status)
	}
	for _, srv := range []*testkit.Server{a.srv, b} {
		if resp := guess(t, from(99), at[srv], "open sesame"); resp.StatusCode != 429 {
			t.Errorf("the right password at %s while the link is throttled: %d, want 429", srv.URL, resp.StatusCode)
		}
	}
}
