package qr

import (
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// The frame's text is set in Go Regular, embedded in the binary, so a
// PNG's text never depends on the fonts of the machine it runs on.
// SVG names the same family first and falls back to sans-serif; PDF
// embeds it.

// goRegular is the parsed font, shared (sfnt.Font is safe for concurrent
// use through separate faces).
var goRegular = sync.OnceValues(func() (*sfnt.Font, error) { return opentype.Parse(goregular.TTF) })

// measureEm is the size at which advances are measured; large, so the
// 26.6 fixed point loses nothing that matters.
const measureEm = 1000

// textMetrics are the text's advance width, ascent and descent per unit
// of font size (so for a size of s units the width is s*width).
type textMetrics struct{ width, ascent, descent float64 }

func measureText(s string) (textMetrics, error) {
	f, err := goRegular()
	if err != nil {
		return textMetrics{}, err
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: measureEm, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return textMetrics{}, err
	}
	defer face.Close()
	m := face.Metrics()
	adv := font.MeasureString(face, s)
	return textMetrics{
		width:   fixedFloat(adv) / measureEm,
		ascent:  fixedFloat(m.Ascent) / measureEm,
		descent: fixedFloat(m.Descent) / measureEm,
	}, nil
}

func fixedFloat(v fixed.Int26_6) float64 { return float64(v) / 64 }

// textLayout is where the frame's text goes, in module units: its font
// size and the baseline's centre.
type textLayout struct {
	size     float64
	cx, base float64
	metrics  textMetrics
}

// layoutText fits the text into the band: at most 55 % of the band's
// height, at most 90 % of the picture's width, centred.
func (s *scene) layoutText() (textLayout, error) {
	tm, err := measureText(s.o.Frame.Text.String())
	if err != nil {
		return textLayout{}, err
	}
	bh := s.h - s.band.y - frameBorder
	size := 0.55 * bh
	if tm.width > 0 {
		size = min(size, 0.9*s.w/tm.width)
	}
	mid := s.band.y + bh/2
	return textLayout{
		size: size, cx: s.w / 2,
		base:    mid + size*(tm.ascent-tm.descent)/2,
		metrics: tm,
	}, nil
}
