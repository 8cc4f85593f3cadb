package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
	"github.com/linkqr/linkqr/internal/webhook"
)

// TestWebhooksAreWired: the assembled service fans link and scan events
// out to a subscription and its River worker delivers them, signed.
func TestWebhooksAreWired(t *testing.T) {
	t.Parallel()
	got := make(chan []byte, 10)
	headers := make(chan http.Header, 10)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		headers <- r.Header.Clone()
		got <- b
	}))
	defer rcv.Close()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	tn := testkit.NewTenant(t, srv.Pool)
	sub, err := srv.App.Webhooks.Create(context.Background(), tn.WorkspaceID, webhook.CreateInput{
		URL: rcv.URL, Events: []string{"link.created", "scan.created"},
	})
	if err != nil {
		t.Fatal(err)
	}
	token := srv.APIKey(t, tn.WorkspaceID)
	link := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/w"}`), 201)

	req, _ := http.NewRequest("GET", link["short_url"].(string), nil)
	req.Header.Set("User-Agent", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1")
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil || resp.StatusCode != 302 {
		t.Fatalf("redirect: %v %v", resp, err)
	}
	resp.Body.Close()

	types := map[string]bool{}
	for range 2 {
		select {
		case body := <-got:
			h := <-headers
			if err := webhook.Verify(body, h.Get("Service-Signature"), sub.Secret, webhook.DefaultTolerance, time.Now()); err != nil {
				t.Errorf("signature: %v", err)
			}
			var env struct {
				Type string `json:"type"`
				Data struct {
					Link struct {
						ID string `json:"id"`
					} `json:"link"`
				} `json:"data"`
			}
			if err := json.Unmarshal(body, &env); err != nil || env.Data.Link.ID != link["id"] {
				t.Errorf("envelope %s: %v", body, err)
			}
			types[env.Type] = true
		case <-time.After(15 * time.Second):
			t.Fatalf("received only %v", types)
		}
	}
	if !types["link.created"] || !types["scan.created"] {
		t.Fatalf("received %v", types)
	}
}

// TestWebhookMetrics: /metrics counts delivery attempts by outcome (through
// the core's OnAttempt hook), times them, and reports the queue's depth by
// state and the oldest due delivery's wait. (QueueStats' values are pinned
// by internal/webhook's tests; here the series must exist and move.)
func TestWebhookMetrics(t *testing.T) {
	t.Parallel()
	var fail atomic.Bool
	fail.Store(true)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			w.WriteHeader(500)
		}
	}))
	defer rcv.Close()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	tn := testkit.NewTenant(t, srv.Pool)
	if _, err := srv.App.Webhooks.Create(context.Background(), tn.WorkspaceID, webhook.CreateInput{URL: rcv.URL, Events: []string{"link.created"}}); err != nil {
		t.Fatal(err)
	}
	token := srv.APIKey(t, tn.WorkspaceID)
	body := scrapeUntil(t, srv.MetricsURL, regexp.MustCompile(`(?m)^linkqr_webhook_deliveries_total\{outcome="succeeded"\} 0$`))
	for _, state := range webhook.QueueStates {
		if !regexp.MustCompile(`(?m)^linkqr_webhook_queue_depth\{state="` + state + `"\} 0$`).MatchString(body) {
			t.Errorf("idle queue: no %s depth of 0", state)
		}
	}
	if !strings.Contains(body, "\nlinkqr_webhook_oldest_pending_seconds 0\n") {
		t.Error("idle queue: no oldest pending age of 0")
	}

	testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", token, `{"target_url":"https://example.com/m"}`), 201)
	scrapeUntil(t, srv.MetricsURL, regexp.MustCompile(`(?m)^linkqr_webhook_deliveries_total\{outcome="failed"\} [1-9]`))
	// The failed attempt is retried 5 s later, by River, and succeeds.
	fail.Store(false)
	body = scrapeUntil(t, srv.MetricsURL, regexp.MustCompile(`(?m)^linkqr_webhook_deliveries_total\{outcome="succeeded"\} 1$`))
	if !regexp.MustCompile(`(?m)^linkqr_webhook_delivery_duration_seconds_count [2-9]$`).MatchString(body) {
		t.Errorf("the latency histogram did not count both attempts")
	}
}

// scrapeUntil polls /metrics on the metrics listener at base (a Server's
// MetricsURL) until re matches it, and returns the body.
func scrapeUntil(t *testing.T, base string, re *regexp.Regexp) string {
	t.Helper()
	var b []byte
	wait.Until(t, 30*time.Second, func() (bool, string) {
		resp := testkit.Get(t, base+"/metrics", nil)
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s/metrics: %d", base, resp.StatusCode)
		}
		return re.Match(b), fmt.Sprintf("/metrics never matched %s:\n%s", re, b)
	})
	return string(b)
}
