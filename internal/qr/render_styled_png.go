package qr

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// renderStyledPNG draws a scene (module styles, logo, frame) into an RGBA
// canvas (RGBA, whose fills take the standard library's fast paths) of Size pixels across, a whole number of pixels per module so
// edges stay crisp. Unlike the plain 1-bit path it holds the picture in
// memory (4 bytes a pixel: 64 MiB at 4096 px), which the render bound of
// package qrserve keeps to a few at a time.
func renderStyledPNG(s scene) ([]byte, error) {
	units := int(s.w)
	if s.o.Size < units {
		return nil, &TooSmallError{Size: s.o.Size, Min: units}
	}
	scale := s.o.Size / units
	off := (s.o.Size - units*scale) / 2
	height := int(s.h)*scale + 2*off
	c := &canvas{img: newCanvasImage(s.o.Size, height), scale: float64(scale), off: float64(off)}
	defer releaseCanvasImage(c.img)

	fill(c.img, c.img.Bounds(), opaque(s.o.BG))
	if s.o.Frame != nil {
		c.rect(box{0, 0, s.w, s.h}, opaque(s.o.Frame.Color))
		c.rect(s.inner, opaque(s.o.BG))
	}
	fg := opaque(s.o.FG)
	s.shapes(func(sh shape) {
		switch sh.kind {
		case shapeSquare:
			c.rect(box{sh.x, sh.y, sh.w, 1}, fg)
		case shapeDot:
			c.dot(sh.x, sh.y, fg)
		case shapeRounded:
			c.rounded(box{sh.x, sh.y, sh.w, 1}, roundRadius, fg)
		}
	})
	if s.o.Logo != nil {
		c.logo(s.logo, s.o.Logo)
	}
	if s.o.Frame != nil {
		if err := c.text(s, opaque(s.o.BG)); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	buf.Grow(4096)
	if err := styledPNGEncoder.Encode(&buf, c.img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// canvasPool keeps the pixels of finished canvases up to pooledCanvasBytes
// for the next designed render: a ZIP draws a thousand codes of one size,
// and a fresh 1.2 MiB canvas for each (at 512 px) was most of what a render
// allocated, so the garbage collector ran for the renders several times a
// second, beside the redirect. Larger canvases (4,096 px: 64 MiB) are rare
// and not kept.
var canvasPool sync.Pool

const pooledCanvasBytes = 8 << 20

// newCanvasImage is image.NewRGBA(w×h) on pooled pixels when one fits.
// Its pixels are not cleared: the render fills the whole canvas first.
func newCanvasImage(w, h int) *image.RGBA {
	n := 4 * w * h
	if n <= pooledCanvasBytes {
		if p, ok := canvasPool.Get().(*[]byte); ok && cap(*p) >= n {
			return &image.RGBA{Pix: (*p)[:n], Stride: 4 * w, Rect: image.Rect(0, 0, w, h)}
		}
	}
	return image.NewRGBA(image.Rect(0, 0, w, h))
}

// releaseCanvasImage hands a finished canvas's pixels back to the pool.
func releaseCanvasImage(img *image.RGBA) {
	if cap(img.Pix) <= pooledCanvasBytes {
		p := img.Pix[:cap(img.Pix)]
		canvasPool.Put(&p)
	}
}

// canvas maps module units to pixels: scale pixels a module, off pixels
// of leftover border on each side.
type canvas struct {
	img        *image.RGBA
	scale, off float64
}

func (c *canvas) px(v float64) int { return int(c.off + v*c.scale + 0.5) }

func (c *canvas) pixels(b box) image.Rectangle {
	return image.Rect(c.px(b.x), c.px(b.y), c.px(b.x+b.w), c.px(b.y+b.h))
}

func (c *canvas) rect(b box, col color.RGBA) { fill(c.img, c.pixels(b), col) }

func fill(img *image.RGBA, r image.Rectangle, col color.RGBA) {
	draw.Draw(img, r, image.NewUniform(col), image.Point{}, draw.Src)
}

// dot fills the circle inscribed in the module at (x, y), testing each
// pixel's centre.
func (c *canvas) dot(x, y float64, col color.RGBA) {
	r := c.pixels(box{x, y, 1, 1})
	cx, cy := float64(r.Min.X+r.Max.X)/2, float64(r.Min.Y+r.Max.Y)/2
	rad := float64(r.Dx()) / 2
	for py := r.Min.Y; py < r.Max.Y; py++ {
		for px := r.Min.X; px < r.Max.X; px++ {
			dx, dy := float64(px)+0.5-cx, float64(py)+0.5-cy
			if dx*dx+dy*dy <= rad*rad {
				c.img.SetRGBA(px, py, col)
			}
		}
	}
}

// rounded fills a rectangle whose corners are rounded with radius rad
// (module units).
func (c *canvas) rounded(b box, rad float64, col color.RGBA) {
	r := c.pixels(b)
	rp := rad * c.scale
	for py := r.Min.Y; py < r.Max.Y; py++ {
		for px := r.Min.X; px < r.Max.X; px++ {
			if insideRounded(float64(px)+0.5, float64(py)+0.5, r, rp) {
				c.img.SetRGBA(px, py, col)
			}
		}
	}
}

func insideRounded(x, y float64, r image.Rectangle, rad float64) bool {
	minX, minY, maxX, maxY := float64(r.Min.X), float64(r.Min.Y), float64(r.Max.X), float64(r.Max.Y)
	cx := min(max(x, minX+rad), maxX-rad)
	cy := min(max(y, minY+rad), maxY-rad)
	dx, dy := x-cx, y-cy
	return dx*dx+dy*dy <= rad*rad
}

// logo composites the logo, scaled to its box, over the pad.
func (c *canvas) logo(b box, l *Logo) {
	dst := c.pixels(b)
	draw.Draw(c.img, dst, l.at(dst.Dx(), dst.Dy()), image.Point{}, draw.Over)
}

// text draws the frame's text, anti-aliased, centred in the band.
func (c *canvas) text(s scene, col color.RGBA) error {
	tl, err := s.layoutText()
	if err != nil {
		return err
	}
	f, err := goRegular()
	if err != nil {
		return err
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: tl.size * c.scale, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		return err
	}
	defer face.Close()
	d := font.Drawer{Dst: c.img, Src: image.NewUniform(col), Face: face}
	w := d.MeasureString(s.o.Frame.Text.String())
	x := c.off + tl.cx*c.scale - fixedFloat(w)/2
	y := c.off + tl.base*c.scale
	d.Dot = fixed.Point26_6{X: fixed.Int26_6(x * 64), Y: fixed.Int26_6(y * 64)}
	d.DrawString(s.o.Frame.Text.String())
	return nil
}
