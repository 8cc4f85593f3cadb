package qr

import (
	"image/color"
	"strconv"
)

const hexDigits = "0123456789abcdef"

// renderSVG writes a compact SVG in module units: one background <rect> over
// the whole viewBox (quiet zone included) and one <path> holding every dark
// module, horizontal runs merged into "Mx yhWv1h-Wz" rectangles. One path
// keeps files small and avoids hairline seams between adjacent shapes;
// shape-rendering="crispEdges" asks renderers not to anti-alias edges.
// width and height default to Size pixels; the drawing scales freely.
func renderSVG(m matrix, o Options) []byte {
	n := m.size() + 2*o.Margin
	ns := strconv.Itoa(n)
	size := strconv.Itoa(o.Size)

	b := make([]byte, 0, 512+m.size()*m.size()*2)
	b = append(b, `<svg xmlns="http://www.w3.org/2000/svg" width="`...)
	b = append(b, size...)
	b = append(b, `" height="`...)
	b = append(b, size...)
	b = append(b, `" viewBox="0 0 `...)
	b = append(b, ns...)
	b = append(b, ' ')
	b = append(b, ns...)
	b = append(b, `" shape-rendering="crispEdges"><rect width="`...)
	b = append(b, ns...)
	b = append(b, `" height="`...)
	b = append(b, ns...)
	b = append(b, `" fill="`...)
	b = appendHex(b, o.BG)
	b = append(b, `"/><path fill="`...)
	b = appendHex(b, o.FG)
	b = append(b, `" d="`...)
	for y := 0; y < m.size(); y++ {
		m.runs(y, func(x, w int) {
			b = append(b, 'M')
			b = strconv.AppendInt(b, int64(x+o.Margin), 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(y+o.Margin), 10)
			b = append(b, 'h')
			b = strconv.AppendInt(b, int64(w), 10)
			b = append(b, "v1h-"...)
			b = strconv.AppendInt(b, int64(w), 10)
			b = append(b, 'z')
		})
	}
	b = append(b, "\"/></svg>\n"...)
	return b
}

// appendHex appends c as lower-case #rrggbb.
func appendHex(b []byte, c color.RGBA) []byte {
	return append(b, '#',
		hexDigits[c.R>>4], hexDigits[c.R&15],
		hexDigits[c.G>>4], hexDigits[c.G&15],
		hexDigits[c.B>>4], hexDigits[c.B&15])
}
