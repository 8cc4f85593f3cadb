package web

import (
	"fmt"
	"image/color"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/linkqr/linkqr/internal/qr"
)

// qrDesign is the QR designer of the link page: the API's QR options
// (size, margin, ecc, fg, bg) read from the page's query, checked by the
// same parser as GET /api/v1/links/{id}/qr (so the contrast rule is the
// API's), and the image URLs they give.
type qrDesign struct {
	Size, Margin, ECC string
	FG, BG            string // "#rrggbb", as <input type="color"> sends and shows them
	Errors            FieldErrors
	Contrast          string // "12.6:1"; "" when a colour is malformed
	ContrastOK        bool
	Query             string // the options as a query string, "" when invalid
}

// qrParams are the designer's query parameters.
var qrParams = []string{"size", "margin", "ecc", "fg", "bg"}

// parseQRDesign reads the designer's fields from q (defaults for absent
// ones) and validates them with qr.ParseOptions.
func parseQRDesign(q url.Values) qrDesign {
	d := qrDesign{Size: strconv.Itoa(qr.DefaultSize), Margin: strconv.Itoa(qr.DefaultMargin), ECC: string(qr.ECCMedium), FG: "#000000", BG: "#ffffff", Errors: FieldErrors{}}
	get := func(name string, into *string) {
		if v := strings.TrimSpace(q.Get(name)); v != "" {
			*into = v
		}
	}
	get("size", &d.Size)
	get("margin", &d.Margin)
	get("ecc", &d.ECC)
	get("fg", &d.FG)
	get("bg", &d.BG)
	d.FG, d.BG = hashColour(d.FG), hashColour(d.BG)
	opts := url.Values{
		"size": {d.Size}, "margin": {d.Margin}, "ecc": {d.ECC},
		"fg": {strings.TrimPrefix(d.FG, "#")}, "bg": {strings.TrimPrefix(d.BG, "#")},
	}
	o, err := qr.ParseOptions(opts)
	if fe, ok := fieldErrors(err); ok {
		for pointer, msg := range fe {
			d.Errors[strings.TrimPrefix(pointer, "/query/")] = msg
		}
	}
	fg, okFG := parseColour(d.FG)
	bg, okBG := parseColour(d.BG)
	if okFG && okBG {
		ratio := qr.ContrastRatio(fg, bg)
		d.Contrast = strconv.FormatFloat(math.Floor(ratio*100)/100, 'f', -1, 64) + ":1"
		d.ContrastOK = ratio >= qr.MinContrast
	}
	if err == nil {
		d.Query = url.Values{
			"size": {strconv.Itoa(o.Size)}, "margin": {strconv.Itoa(o.Margin)}, "ecc": {string(o.ECC)},
			"fg": {hexOf(o.FG)}, "bg": {hexOf(o.BG)},
		}.Encode()
	}
	return d
}

// hidden is the designer's state as query parameters for the other forms
// of the page (the range picker), only those the viewer changed.
func qrHidden(q url.Values) []HiddenField {
	var out []HiddenField
	for _, name := range qrParams {
		if v := q.Get(name); v != "" {
			out = append(out, HiddenField{Name: name, Value: v})
		}
	}
	return out
}

// HiddenField is a hidden input that carries another form's state.
type HiddenField struct{ Name, Value string }

// hashColour writes a colour the way a colour input wants it: "#" and
// lower-case hex; anything else stays as typed (and fails validation).
func hashColour(s string) string {
	s = strings.TrimPrefix(s, "#")
	if len(s) == 6 {
		return "#" + strings.ToLower(s)
	}
	return s
}

// parseColour reads "#rrggbb".
func parseColour(s string) (color.RGBA, bool) {
	s = strings.TrimPrefix(s, "#")
	if len(s) != 6 {
		return color.RGBA{}, false
	}
	n, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return color.RGBA{}, false
	}
	return color.RGBA{R: uint8(n >> 16), G: uint8(n >> 8), B: uint8(n), A: 0xff}, true
}

// hexOf is "rrggbb".
func hexOf(c color.RGBA) string { return fmt.Sprintf("%02x%02x%02x", c.R, c.G, c.B) }

// qrFileName names a downloaded QR image after the link's code and the
// options it was drawn with, e.g. "Ab3xY9q-1024px-m4-eccH-1f2a5c-on-ffffff"
// (no pixel size for SVG, which scales).
func qrFileName(code string, o qr.Options) string {
	size := ""
	if o.Format == qr.FormatPNG {
		size = strconv.Itoa(o.Size) + "px-"
	}
	return fmt.Sprintf("%s-%sm%d-ecc%s-%s-on-%s", code, size, o.Margin, o.ECC, hexOf(o.FG), hexOf(o.BG))
}
