package qr

// scene is a styled code's geometry in module units, shared by the PNG,
// SVG and PDF renderers so the three formats draw the same picture.
//
// Without a frame the picture is the symbol and its quiet zone, as in 6.3.
// A frame adds a border of frameBorder modules in the frame colour around
// it and a band of the frame colour below it carrying the text in the bg
// colour.
type scene struct {
	m      matrix
	n      int     // symbol modules per edge
	x0, y0 float64 // the symbol's top-left corner
	w, h   float64 // the whole picture
	pad    *box    // the logo's bg pad, in whole modules of the symbol
	logo   box     // where the logo goes, aspect kept, inside the pad
	band   box     // the frame's text band (zero without a frame)
	inner  box     // the bg area inside the frame (the code and its quiet zone)
	o      Options
}

// box is a rectangle in module units.
type box struct{ x, y, w, h float64 }

// Frame and logo proportions. The pad's edge is at most logoPadShare of
// the symbol's, so it covers at most 16 % of its area (the contract allows
// 20 %); ECC H recovers about 30 % of the codewords.
const (
	frameBorder  = 2.0
	logoPadShare = 0.4
)

// bandHeight is the text band's height for a picture edge of n modules.
func bandHeight(n int) float64 { return float64(max(5, (n*22+50)/100)) }

func layout(m matrix, o Options) scene {
	s := scene{m: m, n: m.size(), o: o}
	quiet := float64(s.n + 2*o.Margin)
	s.w, s.h = quiet, quiet
	s.inner = box{0, 0, quiet, quiet}
	if o.Frame != nil {
		s.inner = box{frameBorder, frameBorder, quiet, quiet}
		s.w = quiet + 2*frameBorder
		bh := bandHeight(s.n + 2*o.Margin)
		s.band = box{0, frameBorder + quiet, s.w, bh + frameBorder}
		s.h = s.w + bh
	}
	s.x0, s.y0 = s.inner.x+float64(o.Margin), s.inner.y+float64(o.Margin)
	if o.Logo != nil {
		s.placeLogo()
	}
	return s
}

// placeLogo sizes the pad in whole modules with the symbol's parity, so it
// sits centred on the module grid and hides whole modules only.
func (s *scene) placeLogo() {
	side := int(float64(s.n) * logoPadShare)
	if (s.n-side)%2 != 0 {
		side--
	}
	at := float64((s.n - side) / 2)
	s.pad = &box{s.x0 + at, s.y0 + at, float64(side), float64(side)}
	inset := 0.75
	room := float64(side) - 2*inset
	lw, lh := float64(s.o.Logo.w), float64(s.o.Logo.h)
	scale := room / max(lw, lh)
	w, h := lw*scale, lh*scale
	s.logo = box{s.pad.x + (float64(side)-w)/2, s.pad.y + (float64(side)-h)/2, w, h}
}

// hidden reports whether module (x, y) of the symbol lies under the pad.
func (s *scene) hidden(x, y int) bool {
	if s.pad == nil {
		return false
	}
	px, py := float64(x)+s.x0, float64(y)+s.y0
	return px >= s.pad.x && px < s.pad.x+s.pad.w && py >= s.pad.y && py < s.pad.y+s.pad.h
}

// finder reports whether module (x, y) belongs to one of the three 7×7
// finder patterns, which every style draws as solid squares.
func (s *scene) finder(x, y int) bool {
	n := s.n
	return (x < 7 && y < 7) || (x >= n-7 && y < 7) || (x < 7 && y >= n-7)
}

// shape is one dark module's drawing: a square run (w modules wide), a
// dot, or a rounded run.
type shape struct {
	kind shapeKind
	x, y float64 // top-left, absolute module units
	w    float64 // run length in modules (1 for dots)
}

type shapeKind uint8

const (
	shapeSquare shapeKind = iota
	shapeDot
	shapeRounded
)

// roundRadius is a rounded run's corner radius in modules.
const roundRadius = 0.4

// shapes calls fn for every visible dark module, merged into horizontal
// runs where the style allows (squares, and rounded runs whose ends only
// are rounded), finder modules always as square runs.
func (s *scene) shapes(fn func(shape)) {
	style := s.o.Modules
	for y := 0; y < s.n; y++ {
		row := s.m.dark[y]
		for x := 0; x < s.n; {
			if !row[x] || s.hidden(x, y) {
				x++
				continue
			}
			kind := shapeSquare
			if !s.finder(x, y) {
				switch style {
				case ModulesDots:
					kind = shapeDot
				case ModulesRounded:
					kind = shapeRounded
				}
			}
			if kind == shapeDot {
				fn(shape{kind, float64(x) + s.x0, float64(y) + s.y0, 1})
				x++
				continue
			}
			start := x
			for x < s.n && row[x] && !s.hidden(x, y) && s.finder(x, y) == s.finder(start, y) {
				x++
			}
			fn(shape{kind, float64(start) + s.x0, float64(y) + s.y0, float64(x - start)})
		}
	}
}
