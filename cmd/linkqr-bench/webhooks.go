package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// targetDeliveries is the webhook fan-out target: deliveries per second to
// one local receiver.
const targetDeliveries = 1000

// receiver is the bench's own webhook endpoint on loopback: it records, per
// distinct event, the time from the event's created_at (written in the
// transaction of the change) to the moment its request arrived.
type receiver struct {
	srv  *http.Server
	url  string
	mu   sync.Mutex
	seen map[string]bool
	lat  Histogram
	last time.Time
	dups atomic.Int64
	bad  atomic.Int64
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{seen: map[string]bool{}, url: "http://" + ln.Addr().String() + "/hook"}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	var env struct {
		ID        string    `json:"id"`
		CreatedAt time.Time `json:"created_at"`
	}
	if err != nil || json.Unmarshal(body, &env) != nil || env.ID == "" || req.Header.Get("Service-Signature") == "" {
		r.bad.Add(1)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	if r.seen[env.ID] {
		r.dups.Add(1) // at-least-once: a duplicate is allowed, counted once
	} else {
		r.seen[env.ID] = true
		r.lat.Record(now.Sub(env.CreatedAt))
		r.last = now
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// received returns how many distinct events arrived, and when the last did.
func (r *receiver) received() (int, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen), r.last
}

func (r *receiver) close() { _ = r.srv.Close() }

// fanoutResult is one webhook fan-out run.
type fanoutResult struct {
	Events     int           // events caused (scan.created, one per redirect)
	Delivered  int           // distinct events received
	Duplicates int64         // repeated deliveries of an event
	Elapsed    time.Duration // first event written → last one received
	Latency    Histogram     // event created_at → receipt
	Yielded    map[string]float64
	Err        error
}

// Rate is deliveries per second over the whole run.
func (f *fanoutResult) Rate() float64 {
	if f.Elapsed <= 0 {
		return 0
	}
	return float64(f.Delivered) / f.Elapsed.Seconds()
}

// fanoutFixtures is the fan-out's own workspace: a key and links whose
// scans are the events. A workspace apart from the redirect scenario's, so
// the redirect load run during the fan-out causes no events.
type fanoutFixtures struct {
	Token string
	Codes []string
}

// setupFanout creates the fan-out workspace through the admin CLI and the API.
func setupFanout(ctx context.Context, bin string, env []string, baseURL string) (fanoutFixtures, error) {
	var fx fanoutFixtures
	var ws struct {
		WorkspaceID string `json:"workspace_id"`
	}
	if err := admin(ctx, bin, env, &ws, "bootstrap", "--email", "hooks@example.com", "--password", "bench password 1234", "--workspace", "Bench webhooks"); err != nil {
		return fx, err
	}
	var key struct {
		Secret string `json:"secret"`
	}
	if err := admin(ctx, bin, env, &key, "api-key", "create", "--workspace", ws.WorkspaceID, "--name", "bench-webhooks",
		"--scopes", "links:write,webhooks:write", "--rate-limit", "100000"); err != nil {
		return fx, err
	}
	fx.Token = key.Secret
	client := &http.Client{Timeout: 30 * time.Second}
	for i := range 20 {
		l, err := createLink(ctx, client, baseURL, fx.Token, fmt.Sprintf("https://example.com/hooks/%d", i), "")
		if err != nil {
			return fx, err
		}
		fx.Codes = append(fx.Codes, l.Code)
	}
	return fx, nil
}

// runFanout subscribes the bench's receiver to scan.created in the
// fan-out workspace, causes n events with n human redirects of its links
// (the scan writer records them in batches, fanning each batch out in its
// transaction, so events are written far faster than they can be
// delivered and the deliveries are what is measured), and waits until the
// receiver has every event. base serves the API, short the short links
// (the same server but behind the topology's HAProxy), metrics the
// metrics of the instance that delivers.
func (b *bench) runFanout(ctx context.Context, base, short, metrics string, fx fanoutFixtures, n int) (fanoutResult, error) {
	res := fanoutResult{Events: n}
	rcv, err := startReceiver()
	if err != nil {
		return res, err
	}
	defer rcv.close()
	client := &http.Client{Timeout: 30 * time.Second, Transport: newTransport(32),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	unsubscribe, err := b.subscribe(ctx, client, base, fx, rcv)
	if err != nil {
		return res, err
	}
	defer unsubscribe()

	before := yielded(ctx, metrics)
	b.progress("webhooks: causing %d scan.created events (redirects, 32 connections), receiver %s", n, rcv.url)
	start := time.Now()
	var next, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || ctx.Err() != nil {
					return
				}
				if err := scanOnce(ctx, client, short+"/"+fx.Codes[int(i)%len(fx.Codes)]); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		})
	}
	wg.Wait()
	caused := time.Since(start)
	if f := failed.Load(); f > 0 {
		return res, fmt.Errorf("%d of %d redirects failed, e.g. %v", f, n, firstErr.Load())
	}
	b.progress("webhooks: %d scans answered in %v; waiting for deliveries", n, caused.Round(time.Millisecond))
	deadline := time.Now().Add(5 * time.Minute)
	for {
		got, last := rcv.received()
		if got >= n {
			res.Elapsed = last.Sub(start)
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			res.Err = fmt.Errorf("only %d of %d events delivered within 5 minutes", got, n)
			res.Elapsed = time.Since(start)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	rcv.mu.Lock()
	res.Delivered, res.Latency = len(rcv.seen), rcv.lat
	rcv.mu.Unlock()
	res.Duplicates = rcv.dups.Load()
	res.Yielded = yieldedSince(ctx, metrics, before)
	if bad := rcv.bad.Load(); bad > 0 && res.Err == nil {
		res.Err = fmt.Errorf("%d deliveries were malformed or unsigned", bad)
	}
	b.progress("webhooks: %d delivered in %v: %.0f deliveries/s, p50 %s, p99 %s", res.Delivered, res.Elapsed.Round(time.Millisecond),
		res.Rate(), ms(res.Latency.Percentile(0.5)), ms(res.Latency.Percentile(0.99)))
	return res, nil
}

// subscribe subscribes rcv to scan.created in the fan-out workspace and
// returns how to unsubscribe (at the end of a run, so a later run's events
// go to its own receiver only).
func (b *bench) subscribe(ctx context.Context, client *http.Client, base string, fx fanoutFixtures, rcv *receiver) (func(), error) {
	body, _ := json.Marshal(map[string]any{"url": rcv.url, "events": []string{"scan.created"}, "description": "bench receiver"})
	raw, err := doJSON(ctx, client, http.MethodPost, base+"/api/v1/webhooks", fx.Token, body, http.StatusCreated)
	if err != nil {
		return nil, err
	}
	var hook struct{ ID string }
	if err := json.Unmarshal(raw, &hook); err != nil || hook.ID == "" {
		return nil, fmt.Errorf("POST /api/v1/webhooks: unexpected body %s", raw)
	}
	return func() {
		if _, err := doJSON(context.WithoutCancel(ctx), client, http.MethodDelete, base+"/api/v1/webhooks/"+hook.ID, fx.Token, nil, http.StatusNoContent); err != nil {
			b.progress("webhooks: unsubscribe: %v", err)
		}
	}, nil
}

// Deliveries keeping pace: the redirect paced at half its measured
// capacity, keepPaceHookRate a second of it on links subscribed to
// scan.created, for -keep-pace; at the end the backlog of undelivered
// events, as the age of the oldest undelivered scan, must be at most
// targetBacklog.
const (
	keepPaceHookRate = 1000
	targetBacklog    = 5 * time.Second
)

// keepPaceResult is that scenario's outcome.
type keepPaceResult struct {
	Rate        float64 // the whole paced redirect load, requests a second
	Caused      uint64  // scan.created events caused (subscribed links' 302s)
	AtEnd       int     // distinct events received when the load stopped
	Delivered   int     // … and once the backlog drained
	Duplicates  int64
	Redirect    phase // the unsubscribed links' share of the load
	Hooks       phase // the subscribed links' share
	Err         error
	LoadElapsed time.Duration
	Yielded     map[string]float64 // seconds waited for the saturated redirect, by work
}

// Backlog is how old the oldest undelivered scan was when the load
// stopped, taking deliveries as roughly in order: the undelivered events
// divided by the rate at which they were caused.
func (k *keepPaceResult) Backlog() time.Duration {
	undelivered := max(0, int64(k.Caused)-int64(k.AtEnd))
	rate := k.Hooks.Measured.Throughput()
	if rate <= 0 {
		rate = keepPaceHookRate
	}
	return time.Duration(float64(undelivered) / rate * float64(time.Second))
}

// runKeepPace runs the keep-pace scenario against base (its metrics
// listener at metrics).
func (b *bench) runKeepPace(ctx context.Context, base, metrics string, fx fanoutFixtures, redirect scenario, rate float64) (keepPaceResult, error) {
	res := keepPaceResult{Rate: rate}
	rcv, err := startReceiver()
	if err != nil {
		return res, err
	}
	defer rcv.close()
	client := &http.Client{Timeout: 30 * time.Second}
	unsubscribe, err := b.subscribe(ctx, client, base, fx, rcv)
	if err != nil {
		return res, err
	}
	defer unsubscribe()
	hooks := scenario{Header: http.Header{"User-Agent": {chromeUA}}, WantCode: http.StatusFound}
	for _, c := range fx.Codes {
		hooks.URLs = append(hooks.URLs, base+"/"+c)
	}
	b.progress("webhooks: redirects at %.0f req/s for %v, %d of them a second on subscribed links", rate, b.opts.KeepPace, keepPaceHookRate)
	before := yielded(ctx, metrics)
	start := time.Now()
	var wg sync.WaitGroup
	var rerr, herr error
	wg.Go(func() {
		res.Redirect, rerr = b.loadPaced(ctx, "redirect linkqr, unsubscribed links", redirect, rate-keepPaceHookRate, b.opts.KeepPace)
	})
	wg.Go(func() {
		res.Hooks, herr = b.loadPaced(ctx, "redirect linkqr, subscribed links", hooks, keepPaceHookRate, b.opts.KeepPace)
	})
	wg.Wait()
	res.LoadElapsed = time.Since(start)
	if err := errors.Join(rerr, herr); err != nil {
		return res, err
	}
	res.Caused = res.Hooks.Warm.OK + res.Hooks.Measured.OK
	res.AtEnd, _ = rcv.received()
	res.Yielded = yieldedSince(ctx, metrics, before)
	b.progress("webhooks: %d events caused, %d delivered when the load stopped (backlog %v); waiting for the rest", res.Caused, res.AtEnd, res.Backlog())
	deadline := time.Now().Add(3 * time.Minute)
	for {
		got, _ := rcv.received()
		if uint64(got) >= res.Caused {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			res.Err = fmt.Errorf("only %d of %d events delivered within 3 minutes of the load", got, res.Caused)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	res.Delivered, _ = rcv.received()
	res.Duplicates = rcv.dups.Load()
	if bad := rcv.bad.Load(); bad > 0 && res.Err == nil {
		res.Err = fmt.Errorf("%d deliveries were malformed or unsigned", bad)
	}
	return res, nil
}

// scanOnce follows nothing: one human GET of a short URL, which must be 302.
func scanOnce(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", chromeUA)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return fmt.Errorf("GET %s: status %d", url, resp.StatusCode)
	}
	return nil
}

// doJSON sends an authenticated request with a JSON body (none when nil),
// insists on the status want and returns the answer's body.
func doJSON(ctx context.Context, client *http.Client, method, url, token string, body []byte, want int) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != want {
		return raw, fmt.Errorf("%s %s: status %d: %s", method, url, resp.StatusCode, raw)
	}
	return raw, nil
}

// yielded reads linkqr_yielded_seconds_total from /metrics at metrics (a
// linkqr's LINKQR_METRICS_ADDR, not its public address): how long each
// kind of work waited for the redirect because the process was saturated.
// Printed next to the scenarios where deliveries and reports share the
// machine with the redirect, so a miss says whether pacing caused it.
func yielded(ctx context.Context, metrics string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range scrapeMetrics(ctx, metrics) {
		rest, ok := strings.CutPrefix(line, `linkqr_yielded_seconds_total{work="`)
		if !ok {
			continue
		}
		work, value, ok := strings.Cut(rest, `"} `)
		if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); ok && err == nil {
			out[work] = v
		}
	}
	return out
}

// metricValue is the value of an unlabelled metric in the /metrics of the
// metrics listener at metrics; false when it cannot be read.
func metricValue(ctx context.Context, metrics, name string) (float64, bool) {
	return valueIn(scrapeMetrics(ctx, metrics), name)
}

// valueIn is the value of the unlabelled metric name among the lines of
// one scrape; false when it is not there.
func valueIn(lines []string, name string) (float64, bool) {
	for _, line := range lines {
		if value, ok := strings.CutPrefix(line, name+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			return v, err == nil
		}
	}
	return 0, false
}

// scrapeMetrics returns the lines of /metrics on the metrics listener at
// metrics (none on an error).
func scrapeMetrics(ctx context.Context, metrics string) []string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metrics+"/metrics", nil)
	if err != nil {
		return nil
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return strings.Split(string(raw), "\n")
}

// yieldedSince is how much longer each kind of work yielded than before.
func yieldedSince(ctx context.Context, metrics string, before map[string]float64) map[string]float64 {
	now := yielded(ctx, metrics)
	for k, v := range now {
		now[k] = v - before[k]
	}
	return now
}

// formatYielded prints a yieldedSince result.
func formatYielded(y map[string]float64) string {
	return fmt.Sprintf("deliveries %.1f s, analytics %.1f s", y["webhook_delivery"], y["analytics"])
}
