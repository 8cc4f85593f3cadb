package qr

import (
	"errors"
	"fmt"
	"image"
	"image/draw"
	"testing"

	"github.com/linkqr/linkqr/internal/validate"
)

// TestRenderPNGScans decodes rendered PNGs with a real QR reader across ECC
// levels, sizes, margins and colours, and requires the exact URL back.
func TestRenderPNGScans(t *testing.T) {
	type tc struct {
		content string
		ecc     ECC
		size    int
		margin  int
		fg, bg  string
	}
	var cases []tc
	for _, e := range []ECC{ECCLow, ECCMedium, ECCQuartile, ECCHigh} {
		for _, size := range []int{64, 512, 1000, 4096} {
			for _, margin := range []int{0, 4, 16} {
				if size == 4096 {
					// The largest size is about scaling, and decoding 16 Mpx is
					// slow under -race: one margin, two ECC/content pairs.
					if margin == 4 && e == ECCMedium {
						cases = append(cases, tc{shortURL, e, size, margin, "000000", "FFFFFF"})
					}
					if margin == 4 && e == ECCHigh {
						cases = append(cases, tc{longURL, e, size, margin, "000000", "FFFFFF"})
					}
					continue
				}
				cases = append(cases, tc{shortURL, e, size, margin, "000000", "FFFFFF"})
				if size >= 512 {
					cases = append(cases, tc{longURL, e, size, margin, "000000", "FFFFFF"})
				}
			}
		}
		cases = append(cases,
			tc{shortURL, e, 512, 4, "1A237E", "FFF8E1"},
			tc{longURL, e, 1000, 2, "1A237E", "FFF8E1"})
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s/%d/m%d/%s/len%d", c.ecc, c.size, c.margin, c.fg, len(c.content))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := DefaultOptions()
			o.ECC, o.Size, o.Margin, o.FG, o.BG = c.ecc, c.size, c.margin, rgb(c.fg), rgb(c.bg)
			b, ct, err := Render(c.content, o)
			if min := modulesFor(t, c.content, c.ecc) + 2*c.margin; min > c.size {
				// e.g. H at 64 px with margin 16: 33+32 modules > 64 px.
				if !errors.Is(err, ErrTooSmall) {
					t.Fatalf("needs %d px > %d: err = %v, want ErrTooSmall", min, c.size, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ct != "image/png" {
				t.Errorf("content type %q", ct)
			}
			img := decodePNGImage(t, b)
			if got := img.Bounds(); got.Dx() != c.size || got.Dy() != c.size || got.Min.X != 0 || got.Min.Y != 0 {
				t.Fatalf("bounds %v, want %dx%d", got, c.size, c.size)
			}
			text, err := scan(t, img, c.margin)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if text != c.content {
				t.Fatalf("decoded %q, want %q", text, c.content)
			}
		})
	}
}

// TestRenderPNGGeometry checks whole-pixel scaling and centring: the finder
// pattern's top-left dark pixel sits exactly at
// (Size - (modules+2m)*scale)/2 + m*scale, its 7-module edge is exactly
// 7*scale pixels, and everything before it is background.
func TestRenderPNGGeometry(t *testing.T) {
	fg, bg := rgb("1A237E"), rgb("FFF8E1")
	for _, c := range []struct {
		size, margin int
		ecc          ECC
	}{{64, 4, ECCMedium}, {100, 0, ECCLow}, {512, 4, ECCMedium}, {777, 16, ECCHigh}, {1000, 3, ECCQuartile}, {4096, 4, ECCMedium}} {
		t.Run(fmt.Sprintf("%d/m%d/%s", c.size, c.margin, c.ecc), func(t *testing.T) {
			o := DefaultOptions()
			o.Size, o.Margin, o.ECC, o.FG, o.BG = c.size, c.margin, c.ecc, fg, bg
			img := decodePNGImage(t, mustRender(t, shortURL, o))
			if img.Bounds().Dx() != c.size || img.Bounds().Dy() != c.size {
				t.Fatalf("bounds %v", img.Bounds())
			}
			n := modulesFor(t, shortURL, c.ecc)
			total := n + 2*c.margin
			scale := c.size / total
			off := (c.size-total*scale)/2 + c.margin*scale

			if !isColour(img.At(off, off), fg) {
				t.Fatalf("pixel (%d,%d) = %v, want fg", off, off, img.At(off, off))
			}
			if off > 0 && (!isColour(img.At(off-1, off), bg) || !isColour(img.At(off, off-1), bg)) {
				t.Fatalf("pixel before the finder pattern is not bg")
			}
			for x := off; x < off+7*scale; x++ {
				if !isColour(img.At(x, off), fg) {
					t.Fatalf("finder top edge broken at x=%d", x)
				}
			}
			if !isColour(img.At(off+7*scale, off), bg) {
				t.Fatalf("finder top edge longer than 7*scale=%d px", 7*scale)
			}
			// Symmetric quiet zone: the last dark pixel of the top-right
			// finder is as far from the right edge as the first is from the left
			// (give or take the odd remainder pixel).
			right := off + n*scale - 1
			if !isColour(img.At(right, off), fg) || (right+1 < c.size && !isColour(img.At(right+1, off), bg)) {
				t.Fatalf("top-right finder does not end at x=%d", right)
			}
			if gap := (c.size - 1 - right) - off; gap < 0 || gap > 1 {
				t.Fatalf("symbol not centred: left %d, right %d", off, c.size-1-right)
			}
		})
	}
}

// TestScanNegativeControl makes sure the decoding helper can fail, so the
// scan tests above are not vacuous.
func TestScanNegativeControl(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 256, 256))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	if text, err := scan(t, img, 4); err == nil {
		t.Fatalf("decoded %q from a blank image", text)
	}
}

// TestRenderTooSmall: a long URL at ECC H cannot fit 64 px; the error names
// the minimum, matches ErrTooSmall and carries the /query/size field error.
// At exactly the minimum it renders at 1 px per module and still scans.
func TestRenderTooSmall(t *testing.T) {
	o := DefaultOptions()
	o.ECC, o.Size = ECCHigh, 64
	_, _, err := Render(longURL, o)
	if !errors.Is(err, ErrTooSmall) {
		t.Fatalf("err = %v, want ErrTooSmall", err)
	}
	var ts *TooSmallError
	if !errors.As(err, &ts) {
		t.Fatalf("err %T is not *TooSmallError", err)
	}
	wantMin := modulesFor(t, longURL, ECCHigh) + 2*o.Margin
	if ts.Min != wantMin || ts.Size != 64 {
		t.Fatalf("TooSmallError = %+v, want Min %d", ts, wantMin)
	}
	var verrs validate.Errors
	if !errors.As(err, &verrs) || len(verrs) != 1 || verrs[0].Pointer != "/query/size" {
		t.Fatalf("field errors = %v", verrs)
	}
	if want := fmt.Sprint(wantMin); count(verrs[0].Detail, want) != 1 || count(err.Error(), want) != 1 {
		t.Fatalf("messages do not name the minimum %s: %q / %q", want, verrs[0].Detail, err)
	}

	o.Size = wantMin
	img := decodePNGImage(t, mustRender(t, longURL, o))
	if text, err := scan(t, img, o.Margin); err != nil || text != longURL {
		t.Fatalf("at the minimum size: %q, %v", text, err)
	}

	// SVG has no pixel size to overflow.
	o.Size, o.Format = 64, FormatSVG
	if _, _, err := Render(longURL, o); err != nil {
		t.Fatalf("svg: %v", err)
	}
}
