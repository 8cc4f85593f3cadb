package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// bulkBatch is how many links one bulk request creates: the API's maximum.
const bulkBatch = 1000

// targetBulkRedirect bounds what creating links in bulk may take from the
// redirect running beside it at half its capacity: its paced throughput
// within 5 % of the same pace alone, measured just before.
const targetBulkRedirect = 0.05

// bulkResult is the bulk scenario: -bulk links created through POST
// /api/v1/links/bulk by one client, 1,000 a request, as an integrator
// importing a catalogue would, timed on a quiet machine; then the redirect
// paced at half its measured capacity, alone and beside the same client
// creating links without pause, for the ratio.
type bulkResult struct {
	Links    int           // links the timed part created
	Elapsed  time.Duration // how long they took
	Requests int           // bulk requests they took
	// Beside is how many links were created while the redirect ran beside
	// the creation, and in how long.
	Beside        int
	BesideElapsed time.Duration
	Rate          float64 // paced redirect rate
	Alone         phase
	During        phase
	Err           error
}

// LinksPerSecond is the rate of the timed part.
func (r *bulkResult) LinksPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Links) / r.Elapsed.Seconds()
}

// verdict is the redirect's paced throughput beside the bulk creation
// against alone, and whether it is within targetBulkRedirect.
func (r *bulkResult) verdict() (float64, bool) {
	rr := ratio(r.During.Measured.Throughput(), r.Alone.Measured.Throughput())
	return rr, rr >= 1-targetBulkRedirect
}

// bulk runs the scenario against base with token (a key of a high rate
// limit), the redirect scenario paced at rate.
func (b *bench) bulk(ctx context.Context, base, token string, redirect scenario, rate float64) (*bulkResult, error) {
	res := &bulkResult{Rate: rate}
	client := &http.Client{Timeout: 2 * time.Minute}
	b.settle(ctx, "bulk creation alone")
	b.progress("bulk: creating %d links, %d a request", b.opts.Bulk, bulkBatch)
	start := time.Now()
	for res.Links < b.opts.Bulk {
		created, err := bulkRequest(ctx, client, base, token, res.Links)
		if err != nil {
			res.Err = err
			return res, nil
		}
		res.Links += created
		res.Requests++
	}
	res.Elapsed = time.Since(start)
	b.progress("      bulk: %d links in %v (%.0f links/s, %d requests)", res.Links, res.Elapsed.Round(time.Millisecond), res.LinksPerSecond(), res.Requests)

	var err error
	b.settle(ctx, "bulk: redirect alone")
	if res.Alone, err = b.loadPaced(ctx, "redirect linkqr, alone", redirect, rate, b.opts.Duration); err != nil {
		return nil, err
	}
	b.settle(ctx, "bulk: redirect beside bulk creation")
	loadCtx, stopBulk := context.WithCancel(ctx)
	defer stopBulk()
	var wg sync.WaitGroup
	wg.Go(func() { res.Err = b.createWithoutPause(loadCtx, client, base, token, res) })
	res.During, err = b.loadPaced(ctx, "redirect linkqr, beside bulk creation", redirect, rate, b.opts.Duration)
	stopBulk()
	wg.Wait()
	if err != nil {
		return nil, err
	}
	b.progress("      bulk: %d links created beside the redirect in %v", res.Beside, res.BesideElapsed.Round(time.Millisecond))
	return res, nil
}

// createWithoutPause creates links 1,000 a request, numbered after the
// timed part's, until ctx ends. A failed request is the scenario's error;
// ctx ending is not.
func (b *bench) createWithoutPause(ctx context.Context, client *http.Client, base, token string, res *bulkResult) error {
	start := time.Now()
	for n := res.Links; ctx.Err() == nil; n += bulkBatch {
		created, err := bulkRequest(ctx, client, base, token, n)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		res.Beside += created
		res.BesideElapsed = time.Since(start)
	}
	return nil
}

// bulkRequest creates bulkBatch links whose targets carry their number
// from first, and returns how many were created (every one, or an error).
func bulkRequest(ctx context.Context, client *http.Client, base, token string, first int) (int, error) {
	type item struct {
		TargetURL string   `json:"target_url"`
		Title     string   `json:"title"`
		Tags      []string `json:"tags"`
	}
	items := make([]item, bulkBatch)
	for i := range items {
		n := first + i
		items[i] = item{TargetURL: "https://example.com/catalogue/" + strconv.Itoa(n), Title: "Shop " + strconv.Itoa(n), Tags: []string{"bench", "batch-" + strconv.Itoa(first/bulkBatch)}}
	}
	body, err := json.Marshal(map[string]any{"links": items})
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/links/bulk", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "bench-bulk-"+strconv.Itoa(first)+"-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	var out struct {
		Created, Failed int
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil || out.Failed != 0 || out.Created != bulkBatch {
		return 0, fmt.Errorf("POST /api/v1/links/bulk: %d %.300s", resp.StatusCode, raw)
	}
	return out.Created, nil
}

// print writes the scenario's rows and targets.
func (r *bulkResult) print(w io.Writer, row func(string, *phase), target func(name, value, goal string, ok, correctness bool)) {
	fmt.Fprintf(w, "\n%-26s %10s %10s %10s %8s\n", "bulk creation", "req/s", "p50", "p99", "errors")
	fmt.Fprintf(w, "  (one client creating links %d a request; the redirect paced at %.0f req/s, half the capacity above, alone and beside it)\n", bulkBatch, r.Rate)
	row("redirect, alone", &r.Alone)
	row("redirect, beside bulk", &r.During)
	if r.Err != nil {
		target("links created", "unknown", "target: all", false, true)
		fmt.Fprintf(w, "    %v\n", r.Err)
		return
	}
	fmt.Fprintf(w, "  %-24s %s\n", "links created", fmt.Sprintf("%d in %v: %.0f links/s in %d requests", r.Links, r.Elapsed.Round(time.Millisecond), r.LinksPerSecond(), r.Requests))
	if r.BesideElapsed > 0 {
		fmt.Fprintf(w, "  %-24s %s\n", "  beside the redirect", fmt.Sprintf("%d in %v: %.0f links/s", r.Beside, r.BesideElapsed.Round(time.Millisecond), float64(r.Beside)/r.BesideElapsed.Seconds()))
	}
	rr, ok := r.verdict()
	target("ratio beside/alone", fmt.Sprintf("%.3f", rr), fmt.Sprintf("target ≥ %.2f", 1-targetBulkRedirect), ok, false)
	p99a, p99d := r.Alone.Measured.Latency.Percentile(0.99), r.During.Measured.Latency.Percentile(0.99)
	target("p99 beside bulk", ms(p99d)+" (alone "+ms(p99a)+")", "target ≤ "+ms(targetP99), p99d <= targetP99, false)
	errs := r.Alone.Errors() + r.During.Errors()
	target("errors (bulk)", fmt.Sprint(errs), "target 0", errs == 0, true)
}
