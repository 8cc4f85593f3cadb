package api_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
)

// BenchmarkQRZip1000 streams a ZIP of 1,000 QR codes (PNG, 512 px, the
// workspace's designed default: dots and a frame) from an in-process
// server and reports its time (ns/op) and the process's peak live heap
// above what it held before (peak-heap-MiB; the render cache's growth
// included): "uncached" draws every code
// (another size each time, so no ETag repeats), "cached" serves a
// repeated archive from the render cache.
func BenchmarkQRZip1000(b *testing.B) {
	srv := testkit.StartServer(b)
	tn := testkit.NewTenant(b, srv.Pool)
	token := srv.APIKey(b, tn.WorkspaceID)
	f := &linksFixture{srv: srv, tenant: tn, token: token}
	insertLinks(b, f, 1000)
	testkit.JSON(b, srv.Do(b, "PUT", "/api/v1/qr/design", token, `{"modules":"dots","fg":"1A237E","frame":{"text":"Scan me"}}`), 200)

	// A plain client reading into io.Discard: the archive is never held
	// whole on either side (srv.Do would buffer it to validate it).
	fetch := func(b *testing.B, size int) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/links/qr.zip?size="+strconv.Itoa(size), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || n < 1000*100 {
			b.Fatalf("zip: %d, %d bytes, %v", resp.StatusCode, n, err)
		}
	}
	b.Run("uncached", func(b *testing.B) {
		size := 512
		peak := peakHeap(b, func() {
			for b.Loop() {
				size++
				fetch(b, size)
			}
		})
		b.ReportMetric(peak, "peak-heap-MiB")
	})
	b.Run("cached", func(b *testing.B) {
		fetch(b, 512)
		peak := peakHeap(b, func() {
			for b.Loop() {
				fetch(b, 512)
			}
		})
		b.ReportMetric(peak, "peak-heap-MiB")
	})
}

// peakHeap runs fn while sampling the live heap (what the last GC found
// reachable, so garbage awaiting collection does not count) every
// millisecond and returns its peak above the level before fn, in MiB.
func peakHeap(b *testing.B, fn func()) float64 {
	b.Helper()
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak atomic.Uint64
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	fn()
	stop()
	<-done
	if p := peak.Load(); p > base {
		return float64(p-base) / (1 << 20)
	}
	return 0
}
