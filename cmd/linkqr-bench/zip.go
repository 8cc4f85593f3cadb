package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// zipCodes is how many codes one archive holds: the API's maximum.
const zipCodes = 1000

// zipGroups is how many distinct sets of zipCodes links the archives of
// the concurrent part draw from; each of them also asks its own size, so
// no two archives share a rendered code and every file is drawn.
const zipGroups = 10

// targetZipRSS bounds how much linkqr's resident memory may grow while the
// concurrent archives stream: the render cache's 32 MiB, the Go heap's
// headroom over it (GOGC), and a little per archive. What must not happen
// is growth with the number of codes or archives.
const targetZipRSS = 96 << 20

// targetZipRedirect bounds what the archives may take from the redirect
// paced at half its capacity beside them, as for bulk creation.
const targetZipRedirect = 0.05

// zipResult is the QR ZIP scenario: one archive of zipCodes designed codes
// alone (time, size, memory), then -zips archives at once, each of
// zipCodes codes, beside the redirect paced at half its capacity: the
// redirect's ratio to the same pace alone and linkqr's memory meanwhile.
type zipResult struct {
	Concurrent int // archives streaming at once in the second part
	// The archive alone.
	AloneFiles   int
	AloneBytes   int64
	AloneElapsed time.Duration
	AloneRSS     rssGrowth
	// The concurrent archives, for the length of the paced phase.
	Files  int64 // codes received across the archives while it ran
	Bytes  int64
	Failed int // archives that ended in an error or a status other than 200 (or a 429/503 without Retry-After)
	// Waits counts the 429/503 answers with Retry-After the archives' clients
	// waited out (the workspace's share of archives is a few at once);
	// Waiting, the archives still waiting their turn when the load stopped.
	Waits   int64
	Waiting int
	// Singles are single uncached QR codes asked one after another while
	// the archives stream, as an integrator's GET …/qr would be: how many,
	// how many were refused (503), and their slowest answer.
	Singles, SinglesBusy int
	SingleSlowest        time.Duration
	RSS                  rssGrowth
	Rate                 float64 // paced redirect rate
	Alone                phase
	During               phase
	Err                  error
}

// rssGrowth is linkqr's resident memory before a part and its peak during
// it, sampled every 50 ms (VmRSS, not the process's lifetime high-water
// mark, which earlier scenarios set).
type rssGrowth struct{ Before, Peak uint64 }

func (g rssGrowth) growth() uint64 {
	if g.Peak > g.Before {
		return g.Peak - g.Before
	}
	return 0
}

func (g rssGrowth) String() string {
	return fmt.Sprintf("%.0f → %.0f MiB (+%.0f)", mib(g.Before), mib(g.Peak), mib(g.growth()))
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// zips runs the scenario against base with token (a key of a high rate
// limit) on linkqr's process pid, the redirect scenario paced at rate.
func (b *bench) zips(ctx context.Context, base, token string, pid int, redirect scenario, rate float64) (*zipResult, error) {
	res := &zipResult{Concurrent: b.opts.Zips, Rate: rate}
	client := &http.Client{Timeout: 30 * time.Minute}
	b.progress("zip: %d groups of %d links, tagged, and a workspace QR design (logo, dots, frame)", zipGroups, zipCodes)
	for g := range zipGroups {
		if _, err := bulkRequest(ctx, client, base, token, zipFirst(g)); err != nil {
			return nil, err
		}
	}
	if err := putDesign(ctx, client, base, token); err != nil {
		return nil, err
	}

	b.settle(ctx, "one QR ZIP alone")
	b.progress("zip: one archive of %d designed codes", zipCodes)
	var err error
	res.AloneRSS, err = sampleRSS(pid, func() error {
		start := time.Now()
		n, files, _, err := fetchZipWaiting(ctx, client, base, token, 0, 512, nil)
		res.AloneElapsed, res.AloneBytes, res.AloneFiles = time.Since(start), n, files
		return err
	})
	if err != nil {
		res.Err = err
		return res, nil
	}
	b.progress("      zip: %d codes, %.1f MiB in %v; RSS %v", res.AloneFiles, mib(uint64(res.AloneBytes)), res.AloneElapsed.Round(time.Millisecond), res.AloneRSS)

	b.settle(ctx, "zip: redirect alone")
	if res.Alone, err = b.loadPaced(ctx, "redirect linkqr, alone", redirect, rate, b.opts.Duration); err != nil {
		return nil, err
	}
	b.settle(ctx, "zip: redirect beside the archives")
	streams, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	var files, sent, waits atomic.Int64
	var failed, waiting atomic.Int32
	var firstErr error
	var errOnce sync.Once
	res.RSS, err = sampleRSS(pid, func() error {
		for i := range res.Concurrent {
			wg.Go(func() {
				// Each its own group and size: every code is drawn, none cached.
				n, f, queued, err := fetchZipWaiting(streams, client, base, token, i%zipGroups, 513+i, &waits)
				if queued {
					waiting.Add(1)
				}
				files.Add(int64(f))
				sent.Add(n)
				if err != nil && streams.Err() == nil {
					failed.Add(1)
					errOnce.Do(func() { firstErr = err })
				}
			})
		}
		var singles sync.WaitGroup
		singles.Go(func() { res.Singles, res.SinglesBusy, res.SingleSlowest = singleCodes(streams, client, base, token) })
		var err error
		res.During, err = b.loadPaced(ctx, fmt.Sprintf("redirect linkqr, beside %d QR ZIPs", res.Concurrent), redirect, rate, b.opts.Duration)
		stop()
		wg.Wait()
		singles.Wait()
		return err
	})
	if err != nil {
		return nil, err
	}
	res.Files, res.Bytes, res.Failed, res.Err = files.Load(), sent.Load(), int(failed.Load()), firstErr
	res.Waits, res.Waiting = waits.Load(), int(waiting.Load())
	b.progress("      zip: %d archives streamed %d codes (%.1f MiB) beside the redirect; RSS %v", res.Concurrent, res.Files, mib(uint64(res.Bytes)), res.RSS)
	return res, nil
}

// singleCodes asks for one uncached QR code (a new size each time) of a
// link of the first group every 100 ms until ctx ends, and counts the
// answers, the 503s among them, and the slowest.
func singleCodes(ctx context.Context, client *http.Client, base, token string) (n, busy int, slowest time.Duration) {
	id, err := firstLinkID(ctx, client, base, token)
	if err != nil {
		return 0, 0, 0
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for size := 300; ; size++ {
		select {
		case <-ctx.Done():
			return n, busy, slowest
		case <-tick.C:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/links/"+id+"/qr?size="+strconv.Itoa(size), nil)
		if err != nil {
			return n, busy, slowest
		}
		req.Header.Set("Authorization", "Bearer "+token)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			continue // ctx ended mid-request
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		n++
		slowest = max(slowest, time.Since(start))
		if resp.StatusCode == http.StatusServiceUnavailable {
			busy++
		}
	}
}

// firstLinkID is the id of a link of the first ZIP group.
func firstLinkID(ctx context.Context, client *http.Client, base, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/links?limit=1&tag=batch-"+strconv.Itoa(zipFirst(0)/bulkBatch), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var page struct {
		Data []struct{ ID string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || len(page.Data) == 0 {
		return "", fmt.Errorf("GET /api/v1/links: %d, %v", resp.StatusCode, err)
	}
	return page.Data[0].ID, nil
}

// zipFirst is the number of the first link of group g: bulkRequest tags a
// batch "batch-<first/1000>", far above the bulk scenario's batches.
func zipFirst(g int) int { return (1000 + g) * bulkBatch }

// sampleRSS runs fn while sampling pid's VmRSS every 50 ms.
func sampleRSS(pid int, fn func() error) (rssGrowth, error) {
	var g rssGrowth
	if m, err := readStatus(pid); err == nil {
		g.Before = m.RSS
	}
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if m, err := readStatus(pid); err == nil && m.RSS > peak.Load() {
				peak.Store(m.RSS)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	err := fn()
	close(done)
	wg.Wait()
	g.Peak = max(peak.Load(), g.Before)
	return g, err
}

// busyError is an answer that says to come back: 429 or 503 with
// Retry-After (the workspace's share of archives, or the instance's, is
// taken).
type busyError struct {
	status int
	after  time.Duration
}

func (e *busyError) Error() string {
	return fmt.Sprintf("GET qr.zip: %d, retry after %v", e.status, e.after)
}

// fetchZipWaiting downloads the archive of group's links at size px,
// counting its bytes and files as they arrive, and checks it is whole (its
// central directory lists zipCodes files). It fetches as a well-behaved
// client does: a 429 or 503 with Retry-After is waited out and asked again
// while ctx lasts (each wait counted in waits), anything else ends it; with
// waits nil it does not wait, and the busy answer is the error.
func fetchZipWaiting(ctx context.Context, client *http.Client, base, token string, group, size int, waits *atomic.Int64) (int64, int, bool, error) {
	for {
		n, files, err := fetchZipOnce(ctx, client, base, token, group, size)
		var busy *busyError
		if !errors.As(err, &busy) || waits == nil {
			return n, files, false, err
		}
		waits.Add(1)
		select {
		case <-time.After(busy.after):
		case <-ctx.Done():
			return 0, 0, true, nil // still waiting its turn when the load stopped
		}
	}
}

func fetchZipOnce(ctx context.Context, client *http.Client, base, token string, group, size int) (int64, int, error) {
	tag := "batch-" + strconv.Itoa(zipFirst(group)/bulkBatch)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/links/qr.zip?tag="+tag+"&size="+strconv.Itoa(size), nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if secs, _ := strconv.Atoi(resp.Header.Get("Retry-After")); secs > 0 && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		return 0, 0, &busyError{status: resp.StatusCode, after: time.Duration(secs) * time.Second}
	}
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return 0, 0, fmt.Errorf("GET qr.zip: %d %s", resp.StatusCode, raw)
	}
	c := &zipCounter{}
	n, err := io.Copy(c, resp.Body)
	c.flush()
	if err != nil {
		return n, c.files, err
	}
	if c.files != zipCodes || c.central != zipCodes {
		return n, c.files, fmt.Errorf("GET qr.zip: %d files and %d directory entries, want %d", c.files, c.central, zipCodes)
	}
	return n, c.files, nil
}

// zipCounter counts the local file headers and central directory entries
// of a ZIP stream as it passes, without keeping it: a signature counts
// only with a plausible header after it (a .png name), so image bytes that
// happen to spell one do not.
type zipCounter struct {
	tail           []byte // the last bytes of the stream, which a header may straddle
	files, central int
}

var (
	localSig   = []byte("PK\x03\x04")
	centralSig = []byte("PK\x01\x02")
)

const zipHeaderMax = 46 + 255 // the central header, the longer one, with a name

func (c *zipCounter) Write(p []byte) (int, error) {
	buf := append(c.tail, p...)
	i := 0
	for i+4 <= len(buf) {
		j := bytes.IndexByte(buf[i:], 'P')
		if j < 0 {
			i = len(buf)
			break
		}
		i += j
		if len(buf)-i < zipHeaderMax {
			break // decide when more has arrived
		}
		switch {
		case bytes.HasPrefix(buf[i:], localSig) && pngName(buf[i:], 26, 30):
			c.files++
		case bytes.HasPrefix(buf[i:], centralSig) && pngName(buf[i:], 28, 46):
			c.central++
		}
		i++
	}
	c.tail = append(c.tail[:0], buf[min(i, len(buf)):]...)
	return len(p), nil
}

// flush counts what the last bytes hold (the end of the directory).
func (c *zipCounter) flush() {
	for i := 0; i+4 <= len(c.tail); i++ {
		if bytes.HasPrefix(c.tail[i:], centralSig) && pngName(c.tail[i:], 28, 46) {
			c.central++
		}
	}
	c.tail = nil
}

// pngName reports whether the header at h has a name (its length at
// lenAt, the name at nameAt) that ends in .png.
func pngName(h []byte, lenAt, nameAt int) bool {
	if len(h) < nameAt {
		return false
	}
	n := int(binary.LittleEndian.Uint16(h[lenAt:]))
	return n > 4 && n < 256 && nameAt+n <= len(h) && strings.HasSuffix(string(h[nameAt:nameAt+n]), ".png")
}

// putDesign gives the workspace a default design as a brand would: a
// 160 px logo, dot modules, a "Scan me" frame.
func putDesign(ctx context.Context, client *http.Client, base, token string) error {
	logo := image.NewRGBA(image.Rect(0, 0, 160, 160))
	for y := range 160 {
		for x := range 160 {
			dx, dy := x-80, y-80
			if dx*dx+dy*dy < 70*70 {
				logo.Set(x, y, color.RGBA{0xE6, 0x39, 0x46, 0xFF})
			} else {
				logo.Set(x, y, color.White)
			}
		}
	}
	var img bytes.Buffer
	if err := png.Encode(&img, logo); err != nil {
		return err
	}
	body := `{"modules":"dots","fg":"1A237E","frame":{"text":"Scan me"},"logo":"data:image/png;base64,` + base64.StdEncoding.EncodeToString(img.Bytes()) + `"}`
	_, err := doJSON(ctx, client, http.MethodPut, base+"/api/v1/qr/design", token, []byte(body), http.StatusOK)
	return err
}

// print writes the scenario's rows and targets.
func (r *zipResult) print(w io.Writer, row func(string, *phase), target func(name, value, goal string, ok, correctness bool)) {
	fmt.Fprintf(w, "\n%-26s %10s %10s %10s %8s\n", "QR ZIPs", "req/s", "p50", "p99", "errors")
	fmt.Fprintf(w, "  (archives of %d codes in the workspace design: logo, dots, frame; the redirect paced at %.0f req/s, alone and beside %d archives asked for at once by well-behaved clients, which wait out 429/503 as told)\n", zipCodes, r.Rate, r.Concurrent)
	if r.AloneElapsed > 0 {
		fmt.Fprintf(w, "  %-24s %s\n", "one archive alone", fmt.Sprintf("%d codes, %.1f MiB in %v (%.0f codes/s); RSS %v",
			r.AloneFiles, mib(uint64(r.AloneBytes)), r.AloneElapsed.Round(time.Millisecond), float64(r.AloneFiles)/r.AloneElapsed.Seconds(), r.AloneRSS))
	}
	if r.Alone.Measured.OK == 0 && r.During.Measured.OK == 0 {
		target("QR ZIPs", "failed", "target: whole archives", false, true)
		fmt.Fprintf(w, "    %v\n", r.Err)
		return
	}
	row("redirect, alone", &r.Alone)
	row(fmt.Sprintf("redirect, beside %d ZIPs", r.Concurrent), &r.During)
	fmt.Fprintf(w, "  %-24s %s\n", "codes streamed beside", fmt.Sprintf("%d (%.1f MiB) in %v across %d archives", r.Files, mib(uint64(r.Bytes)), r.During.Measured.Elapsed.Round(time.Millisecond), r.Concurrent))
	rr := ratio(r.During.Measured.Throughput(), r.Alone.Measured.Throughput())
	target("ratio beside/alone", fmt.Sprintf("%.3f", rr), fmt.Sprintf("target ≥ %.2f", 1-targetZipRedirect), rr >= 1-targetZipRedirect, false)
	p99a, p99d := r.Alone.Measured.Latency.Percentile(0.99), r.During.Measured.Latency.Percentile(0.99)
	target("p99 beside ZIPs", ms(p99d)+" (alone "+ms(p99a)+")", "target ≤ "+ms(targetP99), p99d <= targetP99, false)
	target("single codes beside", fmt.Sprintf("%d of %d refused (503), slowest %v", r.SinglesBusy, r.Singles, r.SingleSlowest.Round(time.Millisecond)),
		"target 0 refused", r.Singles > 0 && r.SinglesBusy == 0, false)
	target("RSS beside ZIPs", r.RSS.String(), fmt.Sprintf("target ≤ +%d MiB", targetZipRSS>>20), r.RSS.growth() <= targetZipRSS, false)
	fmt.Fprintf(w, "  %-24s %s\n", "archives told to wait", fmt.Sprintf("%d times (429/503 with Retry-After, waited out); %d of %d still waiting their turn at the end", r.Waits, r.Waiting, r.Concurrent))
	target("archives whole", fmt.Sprintf("%d of %d failed", r.Failed, r.Concurrent), "target 0", r.Failed == 0 && r.Err == nil, true)
	if r.Err != nil {
		fmt.Fprintf(w, "    %v\n", r.Err)
	}
	errs := r.Alone.Errors() + r.During.Errors()
	target("errors (ZIPs)", fmt.Sprint(errs), "target 0", errs == 0, true)
}
