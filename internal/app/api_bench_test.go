package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/testkit"
)

// BenchmarkAPIGetLink is one authenticated GET /api/v1/links/{id} through
// the whole in-process path (auth from its cache, rate limit, the link's
// row from PostgreSQL, JSON), over 1,000 links in rotation: linkqr's CPU
// per API read without the network. The end-to-end figure is
// cmd/linkqr-bench's "api GET link".
func BenchmarkAPIGetLink(b *testing.B) {
	s := testkit.StartServer(b, testkit.WithEnv("LINKQR_LOG_LEVEL", "error"))
	ws := testkit.NewTenant(b, s.Pool).WorkspaceID
	limit := 100_000 // the most a key may have: a minute of it is more than a run sends
	_, token, err := s.App.Keys.Create(context.Background(), ws, nil, apikey.CreateInput{Name: "bench", Scopes: []string{"links:read"}, RateLimitPerMinute: &limit})
	if err != nil {
		b.Fatal(err)
	}
	const links = 1000
	paths := make([]string, links)
	for i := range paths {
		linkID := testkit.Link(b, s.Pool, &testkit.LinkOpts{WorkspaceID: ws})
		paths[i] = "/api/v1/links/" + id.Format(id.Link, linkID)
	}
	h := s.App.Handler()
	serve := func(path string) int {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.RemoteAddr = "198.51.100.7:40000"
		req.Host = strings.TrimPrefix(s.URL, "http://") // the service's host (httptest's example.com is no host of ours)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	if code := serve(paths[0]); code != http.StatusOK { // the key's first use runs argon2id
		b.Fatalf("GET %s: %d", paths[0], code)
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if code := serve(paths[next.Add(1)%links]); code != http.StatusOK {
				b.Errorf("status %d", code)
				return
			}
		}
	})
}
