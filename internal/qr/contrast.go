package qr

import (
	"image/color"
	"math"
	"strconv"

	"github.com/linkqr/linkqr/internal/validate"
)

// ContrastRatio is the WCAG 2 contrast ratio of two colours, from 1 (equal)
// to 21 (black on white). Scanners threshold luminance much like eyes do, so
// the same measure that predicts legibility predicts whether a code scans.
// Alpha is ignored. The order of the arguments does not matter.
func ContrastRatio(a, b color.RGBA) float64 {
	la, lb := relativeLuminance(a), relativeLuminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// relativeLuminance follows WCAG 2 (sRGB linearisation, Rec. 709 weights).
func relativeLuminance(c color.RGBA) float64 {
	return 0.2126*linear(c.R) + 0.7152*linear(c.G) + 0.0722*linear(c.B)
}

func linear(v uint8) float64 {
	s := float64(v) / 255
	if s <= 0.03928 {
		return s / 12.92
	}
	return math.Pow((s+0.055)/1.055, 2.4)
}

// checkContrast returns the /query/fg field error for a pair below
// MinContrast. The measured ratio is rounded down to two decimals, so a pair
// at 2.999 reads "2.99:1" and never the contradictory "3:1".
func checkContrast(fg, bg color.RGBA) (validate.FieldError, bool) {
	r := ContrastRatio(fg, bg)
	if r >= MinContrast {
		return validate.FieldError{}, true
	}
	return validate.FieldError{Pointer: "/query/fg", Detail: contrastDetail("bg", r)}, false
}

// contrastDetail is the refusal of a ratio r against the colour named
// other. The measured ratio is rounded down to two decimals.
func contrastDetail(other string, r float64) string {
	shown := strconv.FormatFloat(math.Floor(r*100)/100, 'f', -1, 64)
	return "contrast with " + other + " is " + shown + ":1; at least 3:1 is needed for the code to scan"
}

// ContrastDetail is the sentence refusing a pair below MinContrast, for
// callers that check colours under their own pointers (a design's /fg,
// /frame/color); ok is false when the pair is below MinContrast.
func ContrastDetail(a, b color.RGBA, other string) (detail string, ok bool) {
	r := ContrastRatio(a, b)
	if r >= MinContrast {
		return "", true
	}
	return contrastDetail(other, r), false
}
