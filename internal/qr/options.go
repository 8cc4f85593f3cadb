package qr

import (
	"image/color"

	"github.com/linkqr/linkqr/internal/validate"
)

// Format selects the output encoding. PNG suits chat apps and documents; SVG
// suits print, where the code must stay sharp at any size.
type Format string

// The formats of the API (format=png|svg|pdf). PDF is one vector
// page for print (docs/api.md#qr-designs).
const (
	FormatPNG Format = "png"
	FormatSVG Format = "svg"
	FormatPDF Format = "pdf"
)

// ContentType is the media type a handler must send with the rendered bytes.
func (f Format) ContentType() string {
	switch f {
	case FormatSVG:
		return "image/svg+xml"
	case FormatPDF:
		return "application/pdf"
	}
	return "image/png"
}

// valid reports whether f is one of the formats.
func (f Format) valid() bool { return f == FormatPNG || f == FormatSVG || f == FormatPDF }

// ECC is the QR error-correction level. Higher levels survive more damage
// (a logo on top, a scratched print) at the cost of a denser symbol.
type ECC string

// The four levels of ISO/IEC 18004, recovering about 7, 15, 25 and 30 % of
// the codewords. Only the upper-case letters of the contract are accepted.
const (
	ECCLow      ECC = "L"
	ECCMedium   ECC = "M"
	ECCQuartile ECC = "Q"
	ECCHigh     ECC = "H"
)

// Limits of GET /api/v1/links/{id}/qr (docs/api.md#the-api-in-one-minute). They are exported so the API layer
// and its OpenAPI document can quote the same numbers.
const (
	MinSize       = 64
	MaxSize       = 4096
	DefaultSize   = 512
	MinMargin     = 0
	MaxMargin     = 16
	DefaultMargin = 4
	// MinContrast is the WCAG 2 contrast ratio below which scanners start
	// failing; lower pairs are refused rather than rendered unreadable.
	MinContrast = 3.0
)

// Options are the rendering knobs of the QR endpoint. The zero value is not
// usable (Size 0); start from DefaultOptions or ParseOptions.
type Options struct {
	Format Format // png (default) or svg
	// Size is the PNG edge in pixels (64–4096). For SVG it only sets the
	// width/height attributes; the drawing itself is in module units.
	Size int
	// Margin is the quiet zone in modules (0–16). 4 is what the standard
	// asks for; 0 is for users who add their own border.
	Margin int
	ECC    ECC
	// FG colours the dark modules, BG the light ones and the quiet zone.
	// Alpha is ignored: codes are always opaque, because a transparent
	// background makes the contrast unknowable.
	FG, BG color.RGBA
	// Modules is the data modules' style; "" is square (docs/api.md#qr-designs).
	Modules ModuleStyle
	// Logo, when set, is drawn centred on a BG pad and forces ECC H.
	Logo *Logo
	// Frame, when set, borders the code and carries a text below it.
	Frame *Frame
}

// DefaultOptions returns the contract's defaults: a 512 px black-on-white PNG,
// margin 4, ECC M, square modules, no logo, no frame. Handlers start from it so an empty query renders sensibly.
func DefaultOptions() Options {
	return Options{
		Format:  FormatPNG,
		Size:    DefaultSize,
		Margin:  DefaultMargin,
		ECC:     ECCMedium,
		FG:      color.RGBA{0, 0, 0, 0xff},
		BG:      color.RGBA{0xff, 0xff, 0xff, 0xff},
		Modules: ModulesSquare,
	}
}

// Field error details, shared by ParseOptions and Validate so the client sees
// the same sentence whichever path caught the problem.
const (
	detailFormat    = "must be one of png, svg, pdf"
	detailModules   = "must be one of square, dots, rounded"
	detailFrameText = "must be 1 to 32 printable characters, not only spaces"
	detailLogoFlag  = "must be true or false"
	detailSize      = "must be an integer from 64 to 4096"
	detailMargin    = "must be an integer from 0 to 16"
	detailECC       = "must be one of L, M, Q, H"
	detailColour    = "must be a 6-digit hex colour like 1A2B3C"
	detailUnknown   = "is not a known parameter"
	detailRepeat    = "must be given at most once"
)

// Validate reports every out-of-range field of o, with the same pointers and
// details as ParseOptions. Render calls it so that Options built in code
// cannot bypass the contract's limits.
func (o Options) Validate() error {
	var errs validate.Errors
	if !o.Format.valid() {
		errs.Add("/query/format", detailFormat)
	}
	if o.Size < MinSize || o.Size > MaxSize {
		errs.Add("/query/size", detailSize)
	}
	if o.Margin < MinMargin || o.Margin > MaxMargin {
		errs.Add("/query/margin", detailMargin)
	}
	if _, ok := recoveryLevel(o.ECC); !ok {
		errs.Add("/query/ecc", detailECC)
	}
	if fe, ok := checkContrast(o.FG, o.BG); !ok {
		errs = append(errs, fe)
	}
	o.validateDesign(&errs)
	return errs.Err()
}
