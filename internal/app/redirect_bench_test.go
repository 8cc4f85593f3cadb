package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/linkqr/linkqr/internal/testkit"
)

// BenchmarkRedirect is one redirect through the whole in-process path —
// router, middleware, code cache, scan hand-off — over 10,000 links in
// rotation with a browser User-Agent, the scan writer and the fold running
// behind it as in production. ns/op is linkqr's CPU per redirect without
// the network; allocs/op is what the garbage collector pays per scan.
// `make bench` runs it; the end-to-end figures come from cmd/linkqr-bench.
func BenchmarkRedirect(b *testing.B) {
	s := testkit.StartServer(b, testkit.WithEnv("LINKQR_LOG_LEVEL", "error"))
	ws := testkit.NewTenant(b, s.Pool).WorkspaceID
	const links = 10_000
	if _, err := s.Pool.Exec(context.Background(), `
		INSERT INTO links (id, workspace_id, code, target_url)
		SELECT gen_random_uuid(), $1, 'bench' || i, 'https://example.com/' || i FROM generate_series(1, $2) AS i`, ws, links); err != nil {
		b.Fatal(err)
	}
	h := s.App.Handler()
	codes := make([]string, links)
	for i := range codes {
		codes[i] = fmt.Sprintf("/bench%d", i+1)
	}
	serve := func(path string) int {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("User-Agent", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36")
		req.RemoteAddr = "198.51.100.7:40000"
		req.Host = strings.TrimPrefix(s.URL, "http://") // the default short domain (httptest's example.com is no host of ours)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	for _, c := range codes { // warm the code cache, as a running instance has it
		if code := serve(c); code != http.StatusFound {
			b.Fatalf("GET %s: %d", c, code)
		}
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if code := serve(codes[next.Add(1)%links]); code != http.StatusFound {
				b.Errorf("status %d", code)
				return
			}
		}
	})
}
