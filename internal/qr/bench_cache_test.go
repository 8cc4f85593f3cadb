package qr_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrserve"
)

// BenchmarkCacheHitPNG4096 is a repeated request for the largest PNG
// through qrserve: ETag, LRU lookup, no render. Compare with
// BenchmarkRenderPNG4096. (An external test package: qrserve imports qr.)
func BenchmarkCacheHitPNG4096(b *testing.B) {
	s := qrserve.New(qrserve.Config{})
	o := qr.DefaultOptions()
	o.Size = qr.MaxSize
	const content = "https://lnk.example.io/Ab3xY9q"
	want, err := s.Render(context.Background(), uuid.Nil, content, o)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		got, err := s.Render(context.Background(), uuid.Nil, content, o)
		if err != nil || len(got) != len(want) {
			b.Fatalf("cache hit: %v, %d bytes", err, len(got))
		}
	}
}
