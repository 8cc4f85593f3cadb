package qr

import "testing"

// benchURL is a typical 30-character short URL.
const benchURL = "https://lnk.example.io/Ab3xY9q"

func BenchmarkRenderPNG512(b *testing.B) {
	o := DefaultOptions()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Render(benchURL, o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderPNG4096 is the largest render the contract allows, the
// one the render bound in internal/qrserve exists for.
func BenchmarkRenderPNG4096(b *testing.B) {
	o := DefaultOptions()
	o.Size = MaxSize
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Render(benchURL, o); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRenderSVG(b *testing.B) {
	o := DefaultOptions()
	o.Format = FormatSVG
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Render(benchURL, o); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkETag(b *testing.B) {
	o := DefaultOptions()
	b.ReportAllocs()
	for b.Loop() {
		_ = ETag(benchURL, o)
	}
}
