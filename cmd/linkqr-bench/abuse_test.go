package main

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/linkimport"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/strict"
)

// TestAbuseRoundIsBounded is the abuse scenario of `linkqr-bench -abuse`,
// shorter: one round against linkqr in this process, 10 concurrent
// requests of every expensive class from one account (the bench: 20),
// CSV uploads and dry runs included through the web form. What it asserts
// is not timing (the probe's latency is the bench's to measure): every
// answer is the work done or a refusal, every refusal is 429 or 503 with
// Retry-After, the logo decodes, password guesses, CSV uploads and dry
// runs are refused beyond their budgets while some uploads are kept and
// some dry runs shown, and the Go heap grows by at most the scenario's
// 300 MiB.
func TestAbuseRoundIsBounded(t *testing.T) {
	strict.SkipShort(t, "the abuse round (every expensive request class at once)")
	srv := testkit.StartServer(t)
	tn := testkit.NewTenant(t, srv.Pool)
	token := srv.APIKey(t, tn.WorkspaceID)
	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	target, err := abuseSetup(context.Background(), client, srv.URL, token, tn.Email, tn.Password, 50)
	if err != nil {
		t.Fatal(err)
	}
	if err := target.nextRound(context.Background(), client, 1); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse + ms.StackInuse
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if n := m.HeapInuse + m.StackInuse; n > base {
			return n - base
		}
		return 0
	}
	const n = 10
	r := abuseRoundRun(context.Background(), client, target, heap, n)
	var out strings.Builder
	r.print(&out, 1)
	t.Log("\n" + out.String())
	if len(r.UnexpectedStatus) > 0 {
		t.Errorf("unexpected answers: %v", r.UnexpectedStatus)
	}
	for _, c := range r.Classes {
		if c.NoRetryAfter > 0 || c.Errors > 0 {
			t.Errorf("%s: %d refusals without Retry-After, %d transport errors", c.Name, c.NoRetryAfter, c.Errors)
		}
		got := 0
		for _, k := range c.Status {
			got += k
		}
		if got != n {
			t.Errorf("%s: %d answers, want %d", c.Name, got, n)
		}
		refused := c.Status[429] + c.Status[503]
		if (strings.HasPrefix(c.Name, "logo") || strings.HasPrefix(c.Name, "password") || strings.HasPrefix(c.Name, "CSV")) && refused == 0 {
			t.Errorf("%s: nothing refused of %d at once: %v", c.Name, n, c.Status)
		}
		// Uploads and dry runs do their work within the budget: some are
		// kept (303) and shown (200), at most the workspace's share at once.
		if strings.HasPrefix(c.Name, "CSV upload") && (c.Status[303] == 0 || c.Status[303] > linkimport.MaxPending) {
			t.Errorf("%s: %d kept, want 1 to %d (the waiting imports a workspace may keep): %v", c.Name, c.Status[303], linkimport.MaxPending, c.Status)
		}
		if strings.HasPrefix(c.Name, "CSV dry run") && c.Status[200] == 0 {
			t.Errorf("%s: no dry run shown: %v", c.Name, c.Status)
		}
		if strings.HasPrefix(c.Name, "password") && c.Status[401] > 5 {
			t.Errorf("%s: %d guesses judged, want at most the per-address 5", c.Name, c.Status[401])
		}
	}
	if r.PeakRSS > targetAbuseRSS {
		t.Errorf("the Go heap grew by %d MiB, want at most %d", r.PeakRSS>>20, targetAbuseRSS>>20)
	}
	if r.ProbeErrors > 0 {
		t.Errorf("the probe failed %d of %d scans", r.ProbeErrors, r.Probes)
	}
}
