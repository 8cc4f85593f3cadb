package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The abuse scenario (issue 44, docs/performance.md "Abuse under load"):
// one account sends abuseConcurrency concurrent requests of every
// expensive class at once — logo decodes, large PNG and PDF renders, QR
// ZIPs, CSV exports, analytics reports, long polls, password guesses
// (argon2id), and, signed in through the web form as a browser, CSV
// uploads of a few MB and dry runs of one — while a probe scans a cached
// code one request after another. Every round prints linkqr's peak RSS and the probe's p99
// against the targets; every refusal must be 429 or 503 with Retry-After.
const (
	abuseConcurrency = 20
	targetAbuseRSS   = 300 << 20
	targetAbuseP99   = 50 * time.Millisecond
)

// abuseTarget is what the scenario needs of a running linkqr.
type abuseTarget struct {
	Base, Token string
	LinkID      string // a link of the account: its QR, design and analytics
	Code        string // the probe's code (any cached link)
	Password    string // the short URL of a password-protected link
	After       string // the newest event's id: long polls wait after it
	UI          *uiSession
	CSV         []byte // the file every upload sends (abuseCSVBytes)
	DryRun      string // an uploaded import's page: its dry run
	UploadWS    string // the workspace this round uploads into (nextRound)
}

// abuseClass is one class's answers in a round.
type abuseClass struct {
	Name   string
	Status map[int]int
	// NoRetryAfter counts 429 and 503 answers without Retry-After.
	NoRetryAfter int
	Errors       int // transport errors
}

// abuseRound is one round: every class at once, the probe beside them.
type abuseRound struct {
	Classes          []abuseClass
	Probes           int
	ProbeErrors      int
	ProbeP50         time.Duration
	ProbeP99         time.Duration
	ProbeMax         time.Duration
	PeakRSS          uint64 // linkqr's resident memory (the test: Go heap in use)
	Elapsed          time.Duration
	UnexpectedStatus []string
}

// bombPNG is a small PNG that declares 2048 × 2048 16-bit RGBA pixels:
// 32 MiB once decoded.
func bombPNG() []byte {
	img := image.NewNRGBA64(image.Rect(0, 0, 2048, 2048))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.NRGBA64{0xE5E5, 0x3939, 0x3535, 0xffff}), image.Point{}, draw.Src)
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

// abuseRequests are the expensive classes: each a function making the
// i-th of abuseConcurrency requests.
func abuseRequests(t abuseTarget) []struct {
	name string
	req  func(ctx context.Context, i int) (*http.Request, error)
} {
	logo := `{"ecc":"H","logo":"data:image/png;base64,` + base64.StdEncoding.EncodeToString(bombPNG()) + `"}`
	api := func(method, path, body string) func(ctx context.Context, i int) (*http.Request, error) {
		return func(ctx context.Context, i int) (*http.Request, error) {
			p := strings.ReplaceAll(path, "{i}", fmt.Sprintf("%02d0", 5*i)) // 000, 050, … 950: every render its own size
			var rd io.Reader
			if body != "" {
				rd = strings.NewReader(body)
			}
			req, err := http.NewRequestWithContext(ctx, method, t.Base+p, rd)
			if err != nil {
				return nil, err
			}
			req.Header.Set("Authorization", "Bearer "+t.Token)
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			return req, nil
		}
	}
	return []struct {
		name string
		req  func(ctx context.Context, i int) (*http.Request, error)
	}{
		{"logo decode (PUT qr/design, 2048² 16-bit PNG)", api("PUT", "/api/v1/links/"+t.LinkID+"/qr/design", logo)},
		{"QR PNG 3000-3950 px", api("GET", "/api/v1/links/"+t.LinkID+"/qr?format=png&size=3{i}", "")},
		{"QR PDF", api("GET", "/api/v1/links/"+t.LinkID+"/qr?format=pdf&size=2{i}", "")},
		{"QR ZIP", api("GET", "/api/v1/links/qr.zip?format=png", "")},
		{"CSV export", api("GET", "/api/v1/links/export", "")},
		{"analytics", api("GET", "/api/v1/links/"+t.LinkID+"/analytics", "")},
		{"long poll (wait=5)", api("GET", "/api/v1/events?wait=5&after="+t.After, "")},
		{"CSV upload (3 MB, web form)", func(ctx context.Context, i int) (*http.Request, error) {
			return t.UI.upload(ctx, t.UploadWS, t.CSV)
		}},
		{"CSV dry run (3 MB, web page)", func(ctx context.Context, i int) (*http.Request, error) {
			return t.UI.request(ctx, http.MethodGet, t.DryRun+"?page="+strconv.Itoa(1+i*7), nil) // pages over the whole file
		}},
		{"password guess (argon2id)", func(ctx context.Context, i int) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, "POST", t.Password, strings.NewReader(url.Values{"password": {"wrong-guess-" + strconv.Itoa(i)}}.Encode()))
			if err != nil {
				return nil, err
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("User-Agent", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1")
			return req, nil
		}},
	}
}

// expected answers of each class besides 429 and 503: the work done (303:
// an upload kept, its dry run next).
var abuseOK = []int{200, 201, 204, 303, 401, 422}

// abuseRoundRun runs one round against t, n concurrent requests of each
// class (the bench: abuseConcurrency); rss samples the memory to report
// (called every 20 ms while the round runs).
func abuseRoundRun(ctx context.Context, client *http.Client, t abuseTarget, rss func() uint64, n int) abuseRound {
	var r abuseRound
	start := time.Now()
	classes := abuseRequests(t)
	client = noRedirects(client)
	r.Classes = make([]abuseClass, len(classes))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for c, cl := range classes {
		r.Classes[c] = abuseClass{Name: cl.name, Status: map[int]int{}}
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, err := cl.req(ctx, i)
				if err != nil {
					mu.Lock()
					r.Classes[c].Errors++
					mu.Unlock()
					return
				}
				resp, err := client.Do(req)
				if err != nil {
					mu.Lock()
					r.Classes[c].Errors++
					mu.Unlock()
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				defer mu.Unlock()
				r.Classes[c].Status[resp.StatusCode]++
				if (resp.StatusCode == 429 || resp.StatusCode == 503) && resp.Header.Get("Retry-After") == "" {
					r.Classes[c].NoRetryAfter++
				}
				if resp.StatusCode != 429 && resp.StatusCode != 503 && !slices.Contains(abuseOK, resp.StatusCode) {
					r.UnexpectedStatus = append(r.UnexpectedStatus, fmt.Sprintf("%s: %d", cl.name, resp.StatusCode))
				}
			}()
		}
	}
	done := make(chan struct{})
	var (
		lat      []time.Duration
		probeErr int
		peak     uint64
		aux      sync.WaitGroup
	)
	aux.Add(2)
	go func() { // the probe: a cached code, one request after another
		defer aux.Done()
		noFollow := &http.Client{Transport: client.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		for {
			select {
			case <-done:
				return
			default:
			}
			s := time.Now()
			req, _ := http.NewRequestWithContext(ctx, "GET", t.Base+"/"+t.Code, nil)
			resp, err := noFollow.Do(req)
			if err != nil || resp.StatusCode != http.StatusFound {
				probeErr++
			}
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			lat = append(lat, time.Since(s))
		}
	}()
	go func() { // memory, every 20 ms
		defer aux.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, rss())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	wg.Wait()
	close(done)
	aux.Wait()
	r.Elapsed, r.PeakRSS, r.ProbeErrors, r.Probes = time.Since(start), peak, probeErr, len(lat)
	if len(lat) > 0 {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		r.ProbeP50, r.ProbeP99, r.ProbeMax = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)], lat[len(lat)-1]
	}
	return r
}

// print writes the round as the bench's table does.
func (r abuseRound) print(w io.Writer, n int) bool {
	ok := r.PeakRSS <= targetAbuseRSS && r.ProbeP99 <= targetAbuseP99 && len(r.UnexpectedStatus) == 0 && r.ProbeErrors == 0
	verdict := func(b bool) string {
		if b {
			return "PASS"
		}
		return "FAIL"
	}
	fmt.Fprintf(w, "abuse round %d (%v): peak RSS %.0f MiB (target ≤ %d MiB) %s; probe p50 %v p99 %v max %v over %d scans, %d errors (target p99 ≤ %v) %s\n",
		n, r.Elapsed.Round(time.Millisecond), mib(r.PeakRSS), targetAbuseRSS>>20, verdict(r.PeakRSS <= targetAbuseRSS),
		r.ProbeP50.Round(10*time.Microsecond), r.ProbeP99.Round(10*time.Microsecond), r.ProbeMax.Round(10*time.Microsecond), r.Probes, r.ProbeErrors,
		targetAbuseP99, verdict(r.ProbeP99 <= targetAbuseP99 && r.ProbeErrors == 0))
	for _, c := range r.Classes {
		codes := make([]int, 0, len(c.Status))
		for s := range c.Status {
			codes = append(codes, s)
		}
		sort.Ints(codes)
		parts := make([]string, 0, len(codes))
		for _, s := range codes {
			parts = append(parts, fmt.Sprintf("%d × %d", c.Status[s], s))
		}
		fmt.Fprintf(w, "  %-48s %s", c.Name, strings.Join(parts, ", "))
		if c.NoRetryAfter > 0 || c.Errors > 0 {
			fmt.Fprintf(w, " (%d refusals without Retry-After, %d transport errors)", c.NoRetryAfter, c.Errors)
			ok = false
		}
		fmt.Fprintln(w)
	}
	for _, u := range r.UnexpectedStatus {
		fmt.Fprintf(w, "  unexpected: %s\n", u)
	}
	return ok
}

// abuseSetup creates what the scenario needs in the token's workspace
// (links to render and zip, a password link), signs the account (email,
// password) in through the web form and uploads one CSV file into a
// workspace of its own for the dry runs, and returns the target.
func abuseSetup(ctx context.Context, client *http.Client, base, token, email, password string, links int) (abuseTarget, error) {
	t := abuseTarget{Base: base, Token: token, CSV: abuseCSV()}
	call := func(method, path, body string, out any) error {
		req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return json.Unmarshal(b, out)
	}
	var items []string
	for i := range links {
		items = append(items, fmt.Sprintf(`{"target_url":"https://example.com/abuse/%d"}`, i))
	}
	var bulk struct {
		Data []struct {
			Link struct{ ID, Code string } `json:"link"`
		} `json:"data"`
	}
	if err := call("POST", "/api/v1/links/bulk", `{"links":[`+strings.Join(items, ",")+`]}`, &bulk); err != nil {
		return t, err
	}
	if len(bulk.Data) == 0 {
		return t, fmt.Errorf("bulk creation made no links")
	}
	t.LinkID, t.Code = bulk.Data[0].Link.ID, bulk.Data[0].Link.Code
	var pw struct {
		ShortURL string `json:"short_url"`
	}
	if err := call("POST", "/api/v1/links", `{"target_url":"https://example.com/secret","password":"abuse-secret"}`, &pw); err != nil {
		return t, err
	}
	t.Password = strings.Replace(pw.ShortURL, baseHost(pw.ShortURL), base, 1)
	var events struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := call("GET", "/api/v1/events?limit=1", "", &events); err != nil {
		return t, err
	}
	if len(events.Data) == 0 {
		return t, fmt.Errorf("no event to wait after")
	}
	t.After = events.Data[0].ID
	var err error
	if t.UI, err = uiSignIn(ctx, base, email, password); err != nil {
		return t, err
	}
	ws, err := t.UI.newWorkspace(ctx, client, "Abuse dry runs")
	if err != nil {
		return t, err
	}
	if t.DryRun, err = t.UI.uploadOnce(ctx, client, ws, t.CSV); err != nil {
		return t, err
	}
	// The probe's code is cached before the rounds.
	req, _ := http.NewRequestWithContext(ctx, "HEAD", base+"/"+t.Code, nil)
	if resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req); err == nil {
		resp.Body.Close()
	}
	return t, nil
}

// nextRound prepares round n: a fresh workspace to upload into, so that
// every round's uploads are read and stored, not refused at once by a
// workspace that already keeps its 3 waiting imports.
func (t *abuseTarget) nextRound(ctx context.Context, client *http.Client, n int) error {
	ws, err := t.UI.newWorkspace(ctx, client, "Abuse round "+strconv.Itoa(n))
	t.UploadWS = ws
	return err
}

// baseHost is the scheme and host of a URL ("" when it has none).
func baseHost(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Scheme + "://" + p.Host
}

// abuseMain is `linkqr-bench -abuse`: linkqr alone, the scenario's rounds.
func abuseMain(ctx context.Context, o options, stdout, stderr io.Writer) int {
	b := &bench{opts: o, log: stderr}
	code := func() int {
		var err error
		if b.tmp, err = os.MkdirTemp("", "lqbench"); err != nil {
			fmt.Fprintf(stderr, "linkqr-bench: %v\n", err)
			return 1
		}
		left, fx, err := b.startLeft(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "linkqr-bench: %v\n", err)
			return 1
		}
		client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
		t, err := abuseSetup(ctx, client, left.url, fx.Tokens[0], "bench@example.com", "bench password 1234", 200)
		if err != nil {
			fmt.Fprintf(stderr, "linkqr-bench: abuse setup: %v\n", err)
			return 1
		}
		pid := left.child.Pid()
		rss := func() uint64 {
			m, err := readStatus(pid)
			if err != nil {
				return 0
			}
			return m.RSS
		}
		fmt.Fprintf(stdout, "abuse: one account, %d concurrent requests of each of %d classes per round, a probe scanning a cached code; linkqr RSS before: %.0f MiB\n",
			abuseConcurrency, len(abuseRequests(t)), mib(rss()))
		ok := true
		for round := 1; round <= o.Rounds; round++ {
			if err := t.nextRound(ctx, client, round); err != nil {
				fmt.Fprintf(stderr, "linkqr-bench: abuse round %d: %v\n", round, err)
				return 1
			}
			r := abuseRoundRun(ctx, client, t, rss, abuseConcurrency)
			if !r.print(stdout, round) {
				ok = false
			}
		}
		if !ok {
			fmt.Fprintln(stdout, "\nabuse: a target was missed or a refusal was malformed (see above)")
			if o.Strict {
				return 1
			}
			return 0
		}
		fmt.Fprintln(stdout, "\nabuse: OK, every round within its targets")
		return 0
	}()
	if err := b.cleanup(); err != nil {
		fmt.Fprintf(stderr, "linkqr-bench: %v\n", err)
	}
	return code
}
