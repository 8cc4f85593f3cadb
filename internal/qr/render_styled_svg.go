package qr

import (
	"encoding/base64"
	"html"
	"image/color"
	"strconv"
)

// svgFontFamily names the PNG's and PDF's embedded font first; viewers
// without it fall back to a sans-serif of similar width.
const svgFontFamily = "Go, 'Helvetica Neue', Arial, sans-serif"

// renderStyledSVG writes a scene in module units: the frame and the bg,
// one <path> with every dark module in its style, the logo as an <image>
// of the server's PNG, and the frame's text as a <text> element.
func renderStyledSVG(s scene) ([]byte, error) {
	b := make([]byte, 0, 1024+s.n*s.n*8)
	height := int(float64(s.o.Size)*s.h/s.w + 0.5)
	b = append(b, `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="`...)
	b = strconv.AppendInt(b, int64(s.o.Size), 10)
	b = append(b, `" height="`...)
	b = strconv.AppendInt(b, int64(height), 10)
	b = append(b, `" viewBox="0 0 `...)
	b = appendNum(b, s.w)
	b = append(b, ' ')
	b = appendNum(b, s.h)
	b = append(b, `">`...)
	if s.o.Frame != nil {
		b = appendRect(b, box{0, 0, s.w, s.h}, s.o.Frame.Color)
		b = appendRect(b, s.inner, s.o.BG)
	} else {
		b = appendRect(b, box{0, 0, s.w, s.h}, s.o.BG)
	}
	b = append(b, `<path fill="`...)
	b = appendHex(b, s.o.FG)
	if s.o.Modules == ModulesSquare || s.o.Modules == "" {
		b = append(b, `" shape-rendering="crispEdges`...)
	}
	b = append(b, `" d="`...)
	s.shapes(func(sh shape) { b = appendShape(b, sh) })
	b = append(b, `"/>`...)
	if s.o.Logo != nil {
		b = appendLogo(b, s.logo, s.o.Logo)
	}
	if s.o.Frame != nil {
		tl, err := s.layoutText()
		if err != nil {
			return nil, err
		}
		b = append(b, `<text x="`...)
		b = appendNum(b, tl.cx)
		b = append(b, `" y="`...)
		b = appendNum(b, tl.base)
		b = append(b, `" font-family="`+svgFontFamily+`" font-size="`...)
		b = appendNum(b, tl.size)
		b = append(b, `" text-anchor="middle" fill="`...)
		b = appendHex(b, s.o.BG)
		b = append(b, `">`...)
		b = append(b, html.EscapeString(s.o.Frame.Text.String())...)
		b = append(b, `</text>`...)
	}
	b = append(b, "</svg>\n"...)
	return b, nil
}

// appendBox writes r's x, y, width and height attributes, the last one's
// value left open for what follows.
func appendBox(b []byte, r box) []byte {
	b = append(b, `x="`...)
	b = appendNum(b, r.x)
	b = append(b, `" y="`...)
	b = appendNum(b, r.y)
	b = append(b, `" width="`...)
	b = appendNum(b, r.w)
	b = append(b, `" height="`...)
	b = appendNum(b, r.h)
	return b
}

func appendRect(b []byte, r box, c interface {
	RGBA() (uint32, uint32, uint32, uint32)
}) []byte {
	b = appendBox(append(b, `<rect `...), r)
	b = append(b, `" fill="`...)
	cr, cg, cb, _ := c.RGBA()
	b = appendHex(b, rgbaOf(cr, cg, cb))
	return append(b, `"/>`...)
}

// appendShape adds one module shape to a path: a run as a rectangle, a
// dot as two arcs, a rounded run as a rectangle with arcs at its corners.
func appendShape(b []byte, sh shape) []byte {
	switch sh.kind {
	case shapeDot:
		b = append(b, 'M')
		b = appendNum(b, sh.x)
		b = append(b, ' ')
		b = appendNum(b, sh.y+0.5)
		return append(b, "a.5 .5 0 1 0 1 0a.5 .5 0 1 0-1 0z"...)
	case shapeRounded:
		r := roundRadius
		b = append(b, 'M')
		b = appendNum(b, sh.x+r)
		b = append(b, ' ')
		b = appendNum(b, sh.y)
		b = append(b, 'h')
		b = appendNum(b, sh.w-2*r)
		b = append(b, "a.4 .4 0 0 1 .4 .4v.2a.4 .4 0 0 1-.4 .4h-"...)
		b = appendNum(b, sh.w-2*r)
		return append(b, "a.4 .4 0 0 1-.4-.4v-.2a.4 .4 0 0 1 .4-.4z"...)
	}
	b = append(b, 'M')
	b = appendNum(b, sh.x)
	b = append(b, ' ')
	b = appendNum(b, sh.y)
	b = append(b, 'h')
	b = appendNum(b, sh.w)
	b = append(b, "v1h-"...)
	b = appendNum(b, sh.w)
	return append(b, 'z')
}

func appendLogo(b []byte, r box, l *Logo) []byte {
	b = appendBox(append(b, `<image `...), r)
	b = append(b, `" preserveAspectRatio="xMidYMid meet" href="data:image/png;base64,`...)
	b = base64.StdEncoding.AppendEncode(b, l.png)
	return append(b, `"/>`...)
}

// appendNum writes v with at most three decimals and no trailing zeros.
func appendNum(b []byte, v float64) []byte {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	for len(s) > 1 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	s = trimDot(s)
	return append(b, s...)
}

func trimDot(s string) string {
	if len(s) > 0 && s[len(s)-1] == '.' {
		return s[:len(s)-1]
	}
	return s
}

func rgbaOf(r, g, b uint32) color.RGBA {
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0xff}
}
