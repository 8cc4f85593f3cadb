package qr

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"sync"
)

// pngEncoder reuses the encoder's internal buffers across requests. Default
// compression: on a 1-bit image it costs little more than BestSpeed and keeps
// large codes small on the wire. image/png writes the same bytes for the same
// image, so output stays deterministic.
var pngEncoder = png.Encoder{
	CompressionLevel: png.DefaultCompression,
	BufferPool:       &encoderPool{},
}

// styledPNGEncoder encodes the RGBA canvas of a designed code. Default
// compression spent half of a designed render in deflate; BestSpeed keeps
// the same pixels (PNG is lossless) in about a third of the time, for a
// file some 10 to 20 % larger.
var styledPNGEncoder = png.Encoder{
	CompressionLevel: png.BestSpeed,
	BufferPool:       &encoderPool{},
}

type encoderPool struct{ p sync.Pool }

func (e *encoderPool) Get() *png.EncoderBuffer {
	b, _ := e.p.Get().(*png.EncoderBuffer)
	return b
}

func (e *encoderPool) Put(b *png.EncoderBuffer) { e.p.Put(b) }

// pngLayout is where the symbol goes in a Size×Size image.
type pngLayout struct {
	scale  int // pixels per module, a whole number so edges stay crisp
	offset int // pixel coordinate of the symbol's top-left module
}

// layoutPNG scales modules by floor(Size / (modules + 2*margin)) and centres
// the symbol; any remainder becomes extra quiet zone in the BG colour.
func layoutPNG(modules int, o Options) (pngLayout, error) {
	total := modules + 2*o.Margin
	if o.Size < total {
		return pngLayout{}, &TooSmallError{Size: o.Size, Min: total}
	}
	scale := o.Size / total
	return pngLayout{
		scale:  scale,
		offset: (o.Size-total*scale)/2 + o.Margin*scale,
	}, nil
}

// renderPNG encodes m as a Size×Size PNG with a 2-entry palette (index 0 =
// BG, 1 = FG), which image/png stores at 1 bit per pixel.
//
// The pixels are never materialised: image/png reads a 1-bit paletted image
// through image.PalettedImage.ColorIndexAt one row at a time, so a
// moduleImage that maps each pixel back to its module costs a few KiB where
// an image.Paletted of 4096×4096 costs 16 MiB (and an RGBA one 64 MiB). The
// encoder goes through the same interface call for *image.Paletted, so it is
// no slower, and the bytes are identical to drawing into one.
func renderPNG(m matrix, o Options) ([]byte, error) {
	l, err := layoutPNG(m.size(), o)
	if err != nil {
		return nil, err
	}
	img := newModuleImage(m, l, o)
	var buf bytes.Buffer
	buf.Grow(1024)
	if err := pngEncoder.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// moduleImage is the symbol as an image.PalettedImage computed on demand.
type moduleImage struct {
	m       matrix
	size    int
	palette color.Palette
	// cell[p] is the module row/column under pixel row/column p, or -1 in
	// the quiet zone. The image is square and the symbol centred the same
	// way on both axes, so one table serves x and y.
	cell []int16
}

func newModuleImage(m matrix, l pngLayout, o Options) *moduleImage {
	cell := make([]int16, o.Size)
	end := l.offset + m.size()*l.scale
	for p := range cell {
		cell[p] = -1
		if p >= l.offset && p < end {
			cell[p] = int16((p - l.offset) / l.scale)
		}
	}
	return &moduleImage{
		m:       m,
		size:    o.Size,
		palette: color.Palette{opaque(o.BG), opaque(o.FG)},
		cell:    cell,
	}
}

// ColorModel is the 2-colour palette; image/png picks 1-bit depth from it.
func (im *moduleImage) ColorModel() color.Model { return im.palette }

// Bounds is the whole Size×Size picture, origin at 0,0.
func (im *moduleImage) Bounds() image.Rectangle { return image.Rect(0, 0, im.size, im.size) }

// At is the colour of a pixel, for generic image consumers.
func (im *moduleImage) At(x, y int) color.Color { return im.palette[im.ColorIndexAt(x, y)] }

// ColorIndexAt is what image/png calls per pixel: 1 on a dark module.
func (im *moduleImage) ColorIndexAt(x, y int) uint8 {
	if x < 0 || y < 0 || x >= im.size || y >= im.size {
		return 0
	}
	mx, my := im.cell[x], im.cell[y]
	if mx < 0 || my < 0 || !im.m.dark[my][mx] {
		return 0
	}
	return 1
}

// opaque drops alpha: codes are always drawn fully opaque.
func opaque(c color.RGBA) color.RGBA {
	c.A = 0xff
	return c
}
