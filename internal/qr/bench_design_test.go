package qr_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrserve"
)

// designedOptions is the design the benchmarks draw: a 200 px logo, dots
// and a "Scan me" frame, at 512 px — next to qr.DefaultOptions, the plain
// code (BenchmarkRenderPNG512).
func designedOptions(b *testing.B) qr.Options {
	b.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 200, 200))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{0xE5, 0x39, 0x35, 0xff}), image.Point{}, draw.Src)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		b.Fatal(err)
	}
	logo, err := qr.ParseLogoDataURI("data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes()))
	if err != nil {
		b.Fatal(err)
	}
	text, _ := qr.ParseFrameText("Scan me")
	o := qr.DefaultOptions()
	o.FG = color.RGBA{0x1A, 0x23, 0x7E, 0xff}
	o.Modules, o.Logo, o.Frame = qr.ModulesDots, logo, &qr.Frame{Text: text, Color: o.FG}
	return o
}

// BenchmarkRenderDesignedPNG512 renders a designed code without cache:
// compare with BenchmarkRenderPNG512 (plain, uncached).
func BenchmarkRenderDesignedPNG512(b *testing.B) {
	o := designedOptions(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := qr.Render(benchContent, o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderDesignedPDF renders the designed code as a PDF page.
func BenchmarkRenderDesignedPDF(b *testing.B) {
	o := designedOptions(b)
	o.Format = qr.FormatPDF
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := qr.Render(benchContent, o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyDesign is what a design PUT costs besides the database:
// render at 512 px and decode.
func BenchmarkVerifyDesign(b *testing.B) {
	o := designedOptions(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := qr.Verify(benchContent, o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkQRServerPlainVsDesigned: the same request through qrserve,
// cached (a repeated ETag) and uncached (a new content each time), for a
// plain and a designed code.
func BenchmarkQRServerPlainVsDesigned(b *testing.B) {
	for _, c := range []struct {
		name string
		o    qr.Options
	}{{"plain", qr.DefaultOptions()}, {"designed", designedOptions(b)}} {
		b.Run(c.name+"/cached", func(b *testing.B) {
			s := qrserve.New(qrserve.Config{})
			if _, err := s.Render(context.Background(), uuid.Nil, benchContent, c.o); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Render(context.Background(), uuid.Nil, benchContent, c.o); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/uncached", func(b *testing.B) {
			s := qrserve.New(qrserve.Config{})
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if _, err := s.Render(context.Background(), uuid.Nil, benchContent+strconv.Itoa(i%1000000), c.o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

const benchContent = "https://lnk.example.io/Ab3xY9q?qr=1"
