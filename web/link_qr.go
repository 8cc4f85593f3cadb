package web

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrdesign"
	"github.com/linkqr/linkqr/internal/validate"
)

// qrDesign is the QR designer of the link page (and of Settings → QR
// style): the design's fields (colours, ecc, margin, module style, frame
// text, logo) and the preview's size, read from the page's query over the
// saved design, checked by the same parser as GET /api/v1/links/{id}/qr
// (so the contrast rule is the API's), and the image URLs they give.
type qrDesign struct {
	Size, Margin, ECC string
	FG, BG            string // "#rrggbb", as <input type="color"> sends and shows them
	Modules           string // square, dots, rounded
	Frame             string // the frame's text; "" for none
	HasLogo           bool   // the saved design has a logo
	NoLogo            bool   // the preview leaves it out (the "remove logo" box)
	Own               bool   // the link has a design of its own (not the workspace's)
	Errors            FieldErrors
	Contrast          string // "12.6:1"; "" when a colour is malformed
	ContrastOK        bool
	Query             string // the options as a query string, "" when invalid

	// fg and bg are the colours read (parsed once, qr.ParseColourInput);
	// fgErr and bgErr their refusals.
	fg, bg       color.RGBA
	fgErr, bgErr error
}

// qrParams are the designer's query parameters.
var qrParams = []string{"size", "margin", "ecc", "fg", "bg", "modules", "frame", "nologo"}

// parseQRDesign reads the designer's fields from q over the saved design
// d and validates them with qr.ParseOptions.
func parseQRDesign(q url.Values, d qrdesign.Design) qrDesign {
	v := qrDesign{
		Size: strconv.Itoa(qr.DefaultSize), Margin: strconv.Itoa(d.Margin), ECC: string(d.ECC),
		FG: "#" + strings.ToLower(qr.HexColour(d.FG)), BG: "#" + strings.ToLower(qr.HexColour(d.BG)),
		Modules: string(d.Modules), HasLogo: d.Logo != nil, Own: d.LinkID != nil, Errors: FieldErrors{},
	}
	if d.Frame != nil {
		v.Frame = d.Frame.Text.String()
	}
	get := func(name string, into *string) {
		if v := strings.TrimSpace(q.Get(name)); v != "" {
			*into = v
		}
	}
	get("size", &v.Size)
	get("margin", &v.Margin)
	get("ecc", &v.ECC)
	get("modules", &v.Modules)
	if q.Has("frame") {
		v.Frame = strings.TrimSpace(q.Get("frame"))
	}
	v.NoLogo = q.Get("nologo") == "1"
	v.FG, v.fg, v.fgErr = colourInput(q, "fg", v.FG)
	v.BG, v.bg, v.bgErr = colourInput(q, "bg", v.BG)
	opts := url.Values{"size": {v.Size}, "margin": {v.Margin}, "ecc": {v.ECC}}
	if v.fgErr == nil && v.bgErr == nil {
		opts["fg"], opts["bg"] = []string{hexOf(v.fg)}, []string{hexOf(v.bg)}
	}
	o, err := qr.ParseOptions(opts)
	if fe, ok := fieldErrors(err); ok {
		for pointer, msg := range fe {
			v.Errors[strings.TrimPrefix(pointer, "/query/")] = msg
		}
	}
	for name, cerr := range map[string]error{"fg": v.fgErr, "bg": v.bgErr} {
		if cerr != nil {
			v.Errors[name], err = cerr.Error(), cerr
		}
	}
	if _, merr := qr.ParseModuleStyle(v.Modules); merr != nil {
		v.Errors["modules"], err = "must be one of square, dots, rounded", merr
	}
	if v.Frame != "" {
		if _, ferr := qr.ParseFrameText(v.Frame); ferr != nil {
			v.Errors["frame"], err = "must be 1 to 32 printable characters", ferr
		}
	}
	if v.fgErr == nil && v.bgErr == nil {
		ratio := qr.ContrastRatio(v.fg, v.bg)
		v.Contrast = strconv.FormatFloat(math.Floor(ratio*100)/100, 'f', -1, 64) + ":1"
		v.ContrastOK = ratio >= qr.MinContrast
	}
	if err == nil {
		pq := url.Values{
			"size": {strconv.Itoa(o.Size)}, "margin": {strconv.Itoa(o.Margin)}, "ecc": {string(o.ECC)},
			"fg": {hexOf(o.FG)}, "bg": {hexOf(o.BG)}, "modules": {v.Modules}, "frame": {v.Frame},
		}
		if v.NoLogo {
			pq.Set("nologo", "1")
		}
		v.Query = pq.Encode()
	}
	return v
}

// previewOptions are a preview's options: the saved design d with the
// query's 6.3 parameters laid over it, and the designer's own
// parameters (modules, frame text, nologo) applied; the frame takes fg.
func previewOptions(q url.Values, d qrdesign.Design) (qr.Options, error) {
	q = maps.Clone(q)
	var errs validate.Errors
	o := d.Options()
	if vs, ok := q["modules"]; ok {
		m, err := qr.ParseModuleStyle(vs[0])
		if errs.Check("/query/modules", err) {
			o.Modules = m
		}
	}
	frame, hasFrame := q["frame"]
	if q.Get("nologo") == "1" {
		q.Set("logo", "false")
	}
	for _, name := range []string{"modules", "frame", "nologo"} {
		delete(q, name)
	}
	pq, err := qr.ParseQuery(q)
	if verrs, ok := err.(validate.Errors); ok {
		errs = append(errs, verrs...)
	}
	if err := errs.Err(); err != nil {
		return qr.Options{}, err
	}
	var frameOf *qr.Frame
	if hasFrame {
		o.Frame = nil
		if t := strings.TrimSpace(frame[0]); t != "" {
			text, err := qr.ParseFrameText(t)
			if err != nil {
				errs.Add("/query/frame", "must be 1 to 32 printable characters")
				return qr.Options{}, errs.Err()
			}
			frameOf = &qr.Frame{Text: text}
		}
	}
	o, err = pq.Apply(o)
	if err != nil {
		return qr.Options{}, err
	}
	if frameOf != nil {
		frameOf.Color = o.FG
		o.Frame = frameOf
	}
	return o, nil
}

// qrHidden is the designer's state as query parameters for the other
// forms of the page (the range picker), only those the viewer changed; a
// colour from the designer's own form (picker and hex field) as d read it.
func qrHidden(q url.Values, d qrDesign) []HiddenField {
	var out []HiddenField
	for _, name := range qrParams {
		v := q.Get(name)
		switch {
		case name == "fg" && q.Has("fg_hex"):
			v = d.FG
		case name == "bg" && q.Has("bg_hex"):
			v = d.BG
		}
		if v != "" {
			out = append(out, HiddenField{Name: name, Value: v})
		}
	}
	return out
}

// HiddenField is a hidden input that carries another form's state.
type HiddenField struct{ Name, Value string }

// colourInput reads one colour of the designer, which shows it twice: a
// colour picker (name) and a hex text field (name_hex), with the value the
// page showed in name_was. Without JavaScript to keep them together the
// field that changed wins (the text field, if both did); a query without
// the text field (a link, the range picker's state) gives name; neither,
// saved. The colour is read once, by qr.ParseColourInput; shown is what
// the page shows again: "#rrggbb", or the input as typed when refused.
func colourInput(q url.Values, name, saved string) (shown string, c color.RGBA, err error) {
	shown = saved
	if v := strings.TrimSpace(q.Get(name)); v != "" {
		shown = v
	}
	if typed := strings.TrimSpace(q.Get(name + "_hex")); q.Has(name+"_hex") && typed != strings.TrimSpace(q.Get(name+"_was")) {
		shown = typed
	}
	c, err = qr.ParseColourInput(shown)
	if err != nil {
		return shown, color.RGBA{}, err
	}
	return "#" + hexOf(c), c, nil
}

// pickerColour is a colour as <input type="color"> takes it: the shown
// value when it is one, else black (the text field beside it keeps what
// was typed).
func pickerColour(shown string) string {
	if len(shown) == 7 && shown[0] == '#' {
		if _, err := qr.ParseColour(shown[1:]); err == nil {
			return shown
		}
	}
	return "#000000"
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
