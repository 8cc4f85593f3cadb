package qr

import (
	"image/color"

	"github.com/linkqr/linkqr/internal/validate"
)

// Format selects the output encoding. PNG suits chat apps and documents; SVG
// suits print, where the code must stay sharp at any size.
type Format string

// The formats of the contract (format=png|svg).
const (
	FormatPNG Format = "png"
	FormatSVG Format = "svg"
)

// ContentType is the media type a handler must send with the rendered bytes.
func (f Format) ContentType() string {
	if f == FormatSVG {
		return "image/svg+xml"
	}
	return "image/png"
}

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

// Limits of the contract (section 6.3). They are exported so the API layer
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
}

// DefaultOptions returns the contract's defaults: a 512 px black-on-white PNG,
// margin 4, ECC M. Handlers start from it so an empty query renders sensibly.
func DefaultOptions() Options {
	return Options{
		Format: FormatPNG,
		Size:   DefaultSize,
		Margin: DefaultMargin,
		ECC:    ECCMedium,
		FG:     color.RGBA{0, 0, 0, 0xff},
		BG:     color.RGBA{0xff, 0xff, 0xff, 0xff},
	}
}

// Field error details, shared by ParseOptions and Validate so the client sees
// the same sentence whichever path caught the problem.
const (
	detailFormat  = "must be one of png, svg"
	detailSize    = "must be an integer from 64 to 4096"
	detailMargin  = "must be an integer from 0 to 16"
	detailECC     = "must be one of L, M, Q, H"
	detailColour  = "must be a 6-digit hex colour like 1A2B3C"
	detailUnknown = "is not a known parameter"
	detailRepeat  = "must be given at most once"
)

// Validate reports every out-of-range field of o, with the same pointers and
// details as ParseOptions. Render calls it so that Options built in code
// cannot bypass the contract's limits.
func (o Options) Validate() error {
	var errs validate.Errors
	if o.Format != FormatPNG && o.Format != FormatSVG {
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
	return errs.Err()
}
