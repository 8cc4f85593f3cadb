package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/pgembed"
	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/testkit/strict"
)

// A hard crash under load loses at most the scans of the last 100 ms of
// traffic (docs/performance.md "Measured", the `kill -9` row): the scan writer
// commits every FlushInterval, and the recorder admits no more answered but
// unwritten scans than 100 ms of the current rate (backpressure beyond),
// so every redirect answered more than about that long before the SIGKILL
// has its row in scans — on a busy machine too.
func TestSIGKILLUnderLoadLosesAtMost100ms(t *testing.T) {
	strict.SkipShort(t, "kill -9 under load")
	requirePostgres(t)
	// The bound is the production binary's: the race detector slows the
	// scan writer several times over, and the crash window with it.
	bin := filepath.Join(t.TempDir(), "linkqr")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build linkqr without -race: %v\n%s", err, out)
	}
	// Two busy loops beside it, as on a machine whose other work takes the
	// cores: the bound must hold when the CPU is contended, which is when
	// processes get killed. The recorder keeps it by admitting no more
	// unwritten scans than 100 ms of the current rate (scan/bound.go).
	for range 2 {
		hog := exec.Command("sh", "-c", "while :; do :; done")
		if err := hog.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = hog.Process.Kill(); _ = hog.Wait() })
	}
	dataDir := t.TempDir()
	s := startServeBinary(t, bin, dataDir)
	env := baseEnv(dataDir, freeAddr(t))
	code, ids, errOut := bootstrap(t, env, "correct horse battery staple")
	if code != 0 {
		t.Fatalf("bootstrap: %s", errOut)
	}
	code, out, errOut := runCmd(t, env, "admin", "api-key", "create", "--workspace", ids["workspace_id"], "--name", "crash", "--scopes", "links:write")
	var key map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &key) != nil {
		t.Fatalf("api-key create: exit %d, %q, %s", code, out, errOut)
	}
	var shortURLs []string
	for i := range 20 {
		req, _ := http.NewRequest("POST", s.url+"/api/v1/links", strings.NewReader(fmt.Sprintf(`{"target_url":"https://example.com/crash/%d"}`, i)))
		req.Header.Set("Authorization", "Bearer "+key["secret"])
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var l map[string]any
		err = json.NewDecoder(resp.Body).Decode(&l)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("create link: %d %v", resp.StatusCode, err)
		}
		shortURLs = append(shortURLs, l["short_url"].(string))
	}

	// Redirects from 16 clients, 4,000 a second together (well under the
	// capacity, so the writers keep up as they do in production; at
	// saturation the loss is the buffer and the batches in flight, see
	// docs/scan-pipeline.md); each keeps the times at which its 302s
	// arrived. After a second and a half the process is killed; whatever
	// has not arrived by then is not counted.
	const clients, rate = 16, 4000
	interval := time.Second * clients / rate
	client := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{MaxIdleConnsPerHost: clients},
	}
	var killed atomic.Bool
	var count atomic.Int64
	var killedAt time.Time
	answered := make([][]time.Time, clients)
	var wg sync.WaitGroup
	for c := range answered {
		wg.Go(func() {
			next := time.Now().Add(interval * time.Duration(c) / clients)
			for i := c; !killed.Load(); i++ {
				if wait := time.Until(next); wait > 0 {
					time.Sleep(wait) // pacing the load, not waiting for the server
				}
				next = next.Add(interval)
				req, _ := http.NewRequest("GET", shortURLs[i%len(shortURLs)], nil)
				req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36")
				resp, err := client.Do(req)
				if err != nil {
					return // the server is gone
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusFound {
					answered[c] = append(answered[c], time.Now())
					count.Add(1)
				}
			}
		})
	}
	// Kill once the load has run for a second and a half and answers at
	// least minRate redirects a second: the buffer and the writer are busy
	// then. On a contended machine the clients reach less than rate, so
	// the bound is judged against the rate they did reach (100 ms of the
	// last second's answers), never against an idle machine's.
	const minRate = 500
	type sample struct {
		at time.Time
		n  int64
	}
	var samples []sample
	start := time.Now()
	waitFor(t, fmt.Sprintf("a second and a half of load at %d redirects a second or more", minRate), 60*time.Second, func() bool {
		now, n := time.Now(), count.Load()
		samples = append(samples, sample{now, n})
		var secondAgo *sample
		for i := len(samples) - 1; i >= 0; i-- {
			if now.Sub(samples[i].at) >= time.Second {
				secondAgo = &samples[i]
				break
			}
		}
		return time.Since(start) > 1500*time.Millisecond && secondAgo != nil && n-secondAgo.n >= minRate
	})
	killedAt = time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed.Store(true)
	wg.Wait()
	<-s.done
	_ = s.cmd.Wait()

	total, lastSecond := 0, 0
	for _, times := range answered {
		for _, at := range times {
			if at.Before(killedAt) {
				total++
				if killedAt.Sub(at) <= time.Second {
					lastSecond++
				}
			}
		}
	}
	if lastSecond < minRate/2 {
		t.Fatalf("only %d redirects answered in the last second before the kill: no load to judge by", lastSecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cluster, err := pgembed.Open(ctx, pgembed.Options{DataDir: dataDir + "/pg", Mode: pgembed.Attach})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cluster.Close(context.Background()) }()
	conn, err := pgx.Connect(ctx, cluster.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var rows int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM scans").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	// The documented bound: 100 ms of the traffic, but never below
	// scan.MinUnwritten (a quiet instance does not wait on every write).
	allowed := max(scan.MinUnwritten, int(math.Ceil(float64(lastSecond)*0.1)))
	t.Logf("SIGKILL after %d answered redirects (%d in the last second): %d scans in the database, %d missing, bound %d (100 ms of traffic, at least %d)",
		total, lastSecond, rows, max(0, total-rows), allowed, scan.MinUnwritten)
	if rows < total-allowed {
		t.Errorf("%d scans missing after a hard crash, more than the %d redirects of the last 100 ms", total-rows, allowed)
	}
}
