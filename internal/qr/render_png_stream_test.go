package qr

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"runtime"
	"testing"
)

// drawPalettedReference is the previous renderPNG: the whole symbol drawn
// into an image.Paletted. The streaming moduleImage must encode to exactly
// the same bytes, or cached copies under the same ETag would differ.
func drawPalettedReference(t *testing.T, content string, o Options) []byte {
	t.Helper()
	m, err := encode(content, o.ECC)
	if err != nil {
		t.Fatal(err)
	}
	l, err := layoutPNG(m.size(), o)
	if err != nil {
		t.Fatal(err)
	}
	img := image.NewPaletted(image.Rect(0, 0, o.Size, o.Size), color.Palette{opaque(o.BG), opaque(o.FG)})
	for y := 0; y < m.size(); y++ {
		top := l.offset + y*l.scale
		first := img.Pix[top*img.Stride : top*img.Stride+o.Size]
		m.runs(y, func(x, w int) {
			px := l.offset + x*l.scale
			for i := px; i < px+w*l.scale; i++ {
				first[i] = 1
			}
		})
		for dy := 1; dy < l.scale; dy++ {
			copy(img.Pix[(top+dy)*img.Stride:], first)
		}
	}
	var buf bytes.Buffer
	if err := pngEncoder.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestRenderPNGSameBytesAsPaletted: not materialising the pixels changes no
// byte of the output, so RendererVersion (and every ETag) stays valid.
func TestRenderPNGSameBytesAsPaletted(t *testing.T) {
	for _, c := range []struct {
		content      string
		size, margin int
		ecc          ECC
		fg, bg       string
	}{
		{shortURL, 64, 4, ECCMedium, "000000", "FFFFFF"},
		{shortURL, 100, 0, ECCLow, "000000", "FFFFFF"},
		{shortURL, 777, 16, ECCHigh, "1A237E", "FFF8E1"},
		{longURL, 1000, 3, ECCQuartile, "000000", "FFFFFF"},
		{longURL, 4096, 4, ECCHigh, "1A237E", "FFF8E1"},
	} {
		t.Run(fmt.Sprintf("%d/m%d/%s", c.size, c.margin, c.ecc), func(t *testing.T) {
			o := DefaultOptions()
			o.Size, o.Margin, o.ECC, o.FG, o.BG = c.size, c.margin, c.ecc, rgb(c.fg), rgb(c.bg)
			if got, want := mustRender(t, c.content, o), drawPalettedReference(t, c.content, o); !bytes.Equal(got, want) {
				t.Fatalf("streamed PNG (%d bytes) differs from the paletted drawing (%d bytes)", len(got), len(want))
			}
		})
	}
}

// TestRenderPNG4096Memory bounds what one largest render allocates. Drawing
// into an image.Paletted took 16 MiB for the pixels alone (an RGBA image
// would take 64 MiB); streaming rows needs the encoder's state and the
// output. Allocation is counted, not timed, so the test is deterministic.
func TestRenderPNG4096Memory(t *testing.T) {
	o := DefaultOptions()
	o.Size = MaxSize
	mustRender(t, shortURL, o) // warm the encoder pool
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b := mustRender(t, shortURL, o)
	runtime.ReadMemStats(&after)
	const limit = 4 << 20
	if got := after.TotalAlloc - before.TotalAlloc; got > limit {
		t.Fatalf("one %d px render allocated %d bytes, want at most %d", MaxSize, got, limit)
	}
	if img := decodePNGImage(t, b); img.Bounds().Dx() != MaxSize {
		t.Fatalf("bounds %v", img.Bounds())
	}
}

// TestModuleImageAt: the generic image view agrees with the index view,
// including outside the bounds (background, as image/png never asks).
func TestModuleImageAt(t *testing.T) {
	o := DefaultOptions()
	o.Size, o.FG, o.BG = 200, rgb("1A237E"), rgb("FFF8E1")
	m, err := encode(shortURL, o.ECC)
	if err != nil {
		t.Fatal(err)
	}
	l, err := layoutPNG(m.size(), o)
	if err != nil {
		t.Fatal(err)
	}
	im := newModuleImage(m, l, o)
	if !isColour(im.At(l.offset, l.offset), o.FG) || !isColour(im.At(0, 0), o.BG) || !isColour(im.At(-1, 5), o.BG) || !isColour(im.At(5, o.Size), o.BG) {
		t.Fatal("At disagrees with the layout")
	}
	if im.ColorIndexAt(l.offset+m.size()*l.scale, l.offset) != 0 {
		t.Fatal("pixel right of the symbol is not background")
	}
}
