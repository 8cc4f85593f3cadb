package qr

import (
	"fmt"

	qrcode "github.com/skip2/go-qrcode"
)

// recoveryLevel maps the contract's ECC letters to the encoder's levels.
func recoveryLevel(e ECC) (qrcode.RecoveryLevel, bool) {
	switch e {
	case ECCLow:
		return qrcode.Low, true
	case ECCMedium:
		return qrcode.Medium, true
	case ECCQuartile:
		return qrcode.High, true
	case ECCHigh:
		return qrcode.Highest, true
	}
	return 0, false
}

// matrix is a QR symbol without quiet zone: dark[y][x] is true for a dark
// module. The renderers add the margin themselves so it is exactly Options.Margin.
type matrix struct {
	dark [][]bool
}

// size is the symbol's edge in modules (21 for version 1, +4 per version).
func (m matrix) size() int { return len(m.dark) }

// encode builds the symbol for exactly content at level e.
func encode(content string, e ECC) (matrix, error) {
	level, ok := recoveryLevel(e)
	if !ok {
		return matrix{}, fmt.Errorf("qr: unknown ECC level %q", e)
	}
	q, err := qrcode.New(content, level)
	if err != nil {
		return matrix{}, fmt.Errorf("qr: encode %d bytes at ECC %s: %w", len(content), e, err)
	}
	q.DisableBorder = true
	return matrix{dark: q.Bitmap()}, nil
}

// runs calls fn for every horizontal run of dark modules in row y, left to
// right. Both renderers draw runs rather than modules: fewer fills for PNG,
// far fewer path commands for SVG.
func (m matrix) runs(y int, fn func(x, w int)) {
	row := m.dark[y]
	for x := 0; x < len(row); {
		if !row[x] {
			x++
			continue
		}
		start := x
		for x < len(row) && row[x] {
			x++
		}
		fn(start, x-start)
	}
}
