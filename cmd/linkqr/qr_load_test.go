package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/strict"
)

// releaseBinary is linkqr built as it ships, without the race detector,
// whose shadow memory would dominate a measurement of peak RSS.
var releaseBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "linkqr-release")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "linkqr")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build linkqr: %v\n%s", err, out)
	}
	return bin, nil
})

// peakRSS reads VmHWM, the peak resident set size, of process pid in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// TestQRLoadPeakRSS is the hardening issue's QR finding, measured on the
// binary as it ships: 48 parallel 4096 px PNGs, every one a different image
// (distinct fg) so the cache cannot help, once took the process to 1.72 GB.
// Now the peak RSS must stay under 400 MiB, and every answer must be either
// the image or a refusal with Retry-After: 429 rate-limited (the
// workspace's share of the render slots) or 503 unavailable (the server's).
func TestQRLoadPeakRSS(t *testing.T) {
	strict.SkipShort(t, asProcess)
	requirePostgres(t)
	bin, err := releaseBinary()
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	s := startServeBinary(t, bin, dataDir)
	defer s.stop(t)
	env := baseEnv(dataDir, freeAddr(t))
	code, ids, errOut := bootstrap(t, env, "correct horse battery staple")
	if code != 0 {
		t.Fatalf("bootstrap: %s", errOut)
	}
	code, out, errOut := runCmd(t, env, "admin", "api-key", "create", "--workspace", ids["workspace_id"], "--name", "load", "--scopes", "links:read,links:write")
	var key map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &key) != nil {
		t.Fatalf("api-key create: exit %d, %q, %s", code, out, errOut)
	}
	do := func(method, path, body string) (*http.Response, []byte) {
		req, _ := http.NewRequest(method, s.url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key["secret"])
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return nil, nil
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Error(err)
		}
		return resp, b
	}
	resp, body := do("POST", "/api/v1/links", `{"target_url":"https://example.com/load"}`)
	var link map[string]any
	if resp == nil || resp.StatusCode != 201 || json.Unmarshal(body, &link) != nil {
		t.Fatalf("create link: %v %s", resp, body)
	}
	qrPath := "/api/v1/links/" + link["id"].(string) + "/qr"
	// One small request first, so the key's argon2id check is not part of the burst.
	if resp, _ := do("GET", qrPath+"?size=64", ""); resp == nil || resp.StatusCode != 200 {
		t.Fatalf("warm-up: %v", resp)
	}
	pid := s.cmd.Process.Pid
	before := peakRSS(t, pid)

	const n = 48
	type answer struct {
		status int
		header http.Header
		body   []byte
	}
	answers := make([]answer, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			// Distinct dark foregrounds: 48 different images, none cached.
			resp, body := do("GET", fmt.Sprintf("%s?size=4096&fg=%02X0000", qrPath, i), "")
			if resp != nil {
				answers[i] = answer{resp.StatusCode, resp.Header, body}
			}
		})
	}
	// Redirect latency during the burst, for the log (speed is not asserted
	// in tests; make bench measures it).
	var redirects []time.Duration
	redirectDone := make(chan struct{})
	go func() {
		defer close(redirectDone)
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		for range 20 {
			t0 := time.Now()
			resp, err := client.Get(link["short_url"].(string))
			if err != nil {
				return
			}
			resp.Body.Close()
			redirects = append(redirects, time.Since(t0))
		}
	}()
	close(start)
	wg.Wait()
	<-redirectDone
	peak := peakRSS(t, pid)

	var ok, busy int
	var sample []byte
	for i, a := range answers {
		switch a.status {
		case 200:
			ok++
			cfg, err := png.DecodeConfig(bytes.NewReader(a.body))
			if a.header.Get("Content-Type") != "image/png" || err != nil || cfg.Width != 4096 || cfg.Height != 4096 {
				t.Errorf("request %d: %s, %v, %dx%d", i, a.header.Get("Content-Type"), err, cfg.Width, cfg.Height)
			}
			sample = a.body
		case 503, 429: // the server's render slots, or this workspace's share of them
			busy++
			slug := map[int]string{503: "unavailable", 429: "rate-limited"}[a.status]
			var p map[string]any
			ra, err := strconv.Atoi(a.header.Get("Retry-After"))
			if err != nil || ra < 1 || a.header.Get("Content-Type") != "application/problem+json" ||
				json.Unmarshal(a.body, &p) != nil || !strings.HasSuffix(fmt.Sprint(p["type"]), "/problems/"+slug) {
				t.Errorf("request %d: %d with Retry-After %q, %s", i, a.status, a.header.Get("Retry-After"), a.body)
			}
		default:
			t.Errorf("request %d: status %d, want 200, 429 or 503: %.300s", i, a.status, a.body)
		}
	}
	slices.Sort(redirects)
	var p50, worst time.Duration
	if len(redirects) > 0 {
		p50, worst = redirects[len(redirects)/2], redirects[len(redirects)-1]
	}
	t.Logf("%d parallel 4096 px PNGs: %d rendered, %d refused (429/503); peak RSS %d MiB (before the burst %d MiB); redirects during the burst p50 %s, max %s",
		n, ok, busy, peak>>20, before>>20, p50, worst)
	if ok == 0 {
		t.Fatal("no request was rendered")
	}
	if img, err := png.Decode(bytes.NewReader(sample)); err != nil {
		t.Error(err)
	} else if got := testkit.DecodeQR(t, img); got != link["short_url"].(string)+"?qr=1" {
		t.Errorf("the PNG encodes %q, want %q?qr=1", got, link["short_url"])
	}
	const limit = 400 << 20
	if peak >= limit {
		t.Errorf("peak RSS %d MiB under the QR burst, want < %d MiB", peak>>20, limit>>20)
	}
}
