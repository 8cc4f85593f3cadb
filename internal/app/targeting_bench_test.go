package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
)

// tenRulesAndASplit is a link's targeting that a desktop Chrome matches
// nowhere: every one of the 10 rules is tried (OS, device and country
// lists), then the 50/50 split hashes the visitor. The most a redirect
// can spend on targeting.
const tenRulesAndASplit = `[
	{"if":{"os":["iOS"]},"target_url":"https://example.com/ios"},
	{"if":{"os":["Android"]},"target_url":"https://example.com/android"},
	{"if":{"device":["tablet"]},"target_url":"https://example.com/tablet"},
	{"if":{"country":["DE","AT","CH"]},"target_url":"https://example.com/dach"},
	{"if":{"country":["FR","BE","LU"]},"target_url":"https://example.com/fr"},
	{"if":{"device":["mobile"],"country":["US"]},"target_url":"https://example.com/us-mobile"},
	{"if":{"os":["macOS"],"country":["GB"]},"target_url":"https://example.com/gb-mac"},
	{"if":{"os":["Linux","ChromeOS"]},"target_url":"https://example.com/linux"},
	{"if":{"device":["bot"]},"target_url":"https://example.com/bot"},
	{"if":{"os":["Windows"],"device":["mobile"]},"target_url":"https://example.com/winphone"}]`

// BenchmarkRedirectTargeting compares, in one run and block by block in
// turn, the redirect of a plain link with that of a link with 10 rules
// and a split (docs/targeting.md): plain-cpu-ns/op and targeted-cpu-ns/op
// are what one redirect of each costs in CPU time (the scan writer and the
// fold included), targeted/plain their ratio. The target is at most 1.10.
func BenchmarkRedirectTargeting(b *testing.B) {
	s := testkit.StartServer(b, testkit.WithEnv("LINKQR_LOG_LEVEL", "error"))
	ws := testkit.NewTenant(b, s.Pool).WorkspaceID
	const links = 1_000
	split := `[{"target_url":"https://example.com/a","weight":50},{"target_url":"https://example.com/b","weight":50}]`
	if _, err := s.Pool.Exec(context.Background(), `
		INSERT INTO links (id, workspace_id, code, target_url, rules, split)
		SELECT gen_random_uuid(), $1, kind || i, 'https://example.com/' || i,
		       CASE WHEN kind = 'tgt' THEN $3::jsonb END, CASE WHEN kind = 'tgt' THEN $4::jsonb END
		FROM generate_series(1, $2) AS i, (VALUES ('plain'), ('tgt')) AS k(kind)`, ws, links, strings.Join(strings.Fields(tenRulesAndASplit), ""), split); err != nil {
		b.Fatal(err)
	}
	h := s.App.Handler()
	serve := func(path string) (int, string) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("User-Agent", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36")
		req.RemoteAddr = "198.51.100.7:40000"
		req.Host = strings.TrimPrefix(s.URL, "http://") // the default short domain
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Header().Get("Location")
	}
	plain, targeted := make([]string, links), make([]string, links)
	for i := range links {
		plain[i], targeted[i] = fmt.Sprintf("/plain%d", i+1), fmt.Sprintf("/tgt%d", i+1)
		for _, p := range []string{plain[i], targeted[i]} { // warm the code cache
			if code, _ := serve(p); code != http.StatusFound {
				b.Fatalf("GET %s: %d", p, code)
			}
		}
	}
	if _, loc := serve(targeted[0]); loc != "https://example.com/a" && loc != "https://example.com/b" {
		b.Fatalf("a targeted link led to %s, want a split variant", loc)
	}
	// Blocks of requests, plain and targeted in turn. A block's cost is
	// the CPU time this process spent on it (getrusage: the handlers, the
	// scan writer's and the fold's goroutines, whatever else the shared
	// machine runs) per request: what a redirect costs, all included,
	// wherever the work lands (a split's visitor hash is computed by the
	// redirect instead of the writer). The median block of each side is
	// reported; the blocks are long, so a block's scans written after it
	// ends are a small share of the next one's time.
	const block = 10_000
	var took [2][]float64
	b.ReportAllocs()
	b.ResetTimer()
	for done, n := 0, 0; done < b.N; n++ {
		side, k := n%2, min(block, b.N-done)
		paths := plain
		if side == 1 {
			paths = targeted
		}
		start := cpuTime(b)
		for j := range k {
			if code, _ := serve(paths[(done+j)%links]); code != http.StatusFound {
				b.Fatalf("status %d", code)
			}
		}
		took[side] = append(took[side], float64((cpuTime(b)-start).Nanoseconds())/float64(k))
		done += k
	}
	b.StopTimer()
	p, t := median(took[0]), median(took[1])
	b.ReportMetric(p, "plain-cpu-ns/op")
	b.ReportMetric(t, "targeted-cpu-ns/op")
	b.ReportMetric(t/p, "targeted/plain")
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// median of the blocks' costs per request.
func median(d []float64) float64 {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[len(d)/2]
}
