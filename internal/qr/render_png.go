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

// renderPNG draws m into a 2-colour paletted image (index 0 = BG, so the
// freshly zeroed pixels are already background) and encodes it; image/png
// stores a 2-entry palette at 1 bit per pixel.
func renderPNG(m matrix, o Options) ([]byte, error) {
	l, err := layoutPNG(m.size(), o)
	if err != nil {
		return nil, err
	}
	palette := color.Palette{opaque(o.BG), opaque(o.FG)}
	img := image.NewPaletted(image.Rect(0, 0, o.Size, o.Size), palette)

	for y := 0; y < m.size(); y++ {
		top := l.offset + y*l.scale
		first := img.Pix[top*img.Stride : top*img.Stride+o.Size]
		m.runs(y, func(x, w int) {
			px := l.offset + x*l.scale
			fill(first[px:px+w*l.scale], 1)
		})
		for dy := 1; dy < l.scale; dy++ {
			copy(img.Pix[(top+dy)*img.Stride:], first)
		}
	}

	var buf bytes.Buffer
	buf.Grow(1024)
	if err := pngEncoder.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func fill(b []uint8, v uint8) {
	for i := range b {
		b[i] = v
	}
}

// opaque drops alpha: codes are always drawn fully opaque.
func opaque(c color.RGBA) color.RGBA {
	c.A = 0xff
	return c
}
