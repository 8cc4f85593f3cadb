package qr

import (
	"image/color"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/validate"
)

// ModuleStyle is how the data modules are drawn (docs/api.md#qr-designs). The
// three finder patterns are always solid squares, whatever the style:
// scanners locate the code by them.
type ModuleStyle string

// The module styles.
const (
	ModulesSquare  ModuleStyle = "square"  // one square per module (the 6.3 look)
	ModulesDots    ModuleStyle = "dots"    // one circle per module
	ModulesRounded ModuleStyle = "rounded" // rounded squares, runs joined
)

// ParseModuleStyle accepts exactly square, dots or rounded.
func ParseModuleStyle(s string) (ModuleStyle, error) {
	switch m := ModuleStyle(s); m {
	case ModulesSquare, ModulesDots, ModulesRounded:
		return m, nil
	}
	return "", validate.Reject(detailModules)
}

// Frame limits (docs/api.md#qr-designs).
const (
	MinFrameChars = 1
	MaxFrameChars = 32
)

// Frame is a border of Color around the code with Text below it, the
// call to action of a printed code ("Scan me").
type Frame struct {
	Text  FrameText
	Color color.RGBA
}

// FrameText is 1–32 printable characters, not all of them spaces.
type FrameText struct{ s string }

// ParseFrameText accepts a frame's text.
func ParseFrameText(s string) (FrameText, error) {
	n := utf8.RuneCountInString(s)
	if !utf8.ValidString(s) || n < MinFrameChars || n > MaxFrameChars {
		return FrameText{}, validate.Reject(detailFrameText)
	}
	blank := true
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return FrameText{}, validate.Reject(detailFrameText)
		}
		blank = blank && r == ' '
	}
	if blank {
		return FrameText{}, validate.Reject(detailFrameText)
	}
	return FrameText{s}, nil
}

// StoredFrameText trusts text the database holds (it was parsed on write).
func StoredFrameText(s string) FrameText { return FrameText{s} }

// String is the text as given.
func (t FrameText) String() string { return t.s }

// ParseColour reads a contract colour: exactly six hex digits, RRGGBB,
// without '#'.
func ParseColour(s string) (color.RGBA, error) {
	c, ok := parseHexColour(s)
	if !ok {
		return color.RGBA{}, validate.Reject(detailColour)
	}
	return c, nil
}

// detailColourInput is why a form's colour is refused.
const detailColourInput = "must be a hex colour such as #1A2B3C (or #RGB, such as #FFF)"

// ParseColourInput reads a colour as a person types it in a form:
// "#RRGGBB", also "RRGGBB" and "#RGB" (each digit doubled, as in CSS), in
// any case, with spaces around it. The API's parameters take only
// ParseColour's RRGGBB.
func ParseColourInput(s string) (color.RGBA, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "#")
	if len(s) == 3 {
		s = string([]byte{s[0], s[0], s[1], s[1], s[2], s[2]})
	}
	c, ok := parseHexColour(s)
	if !ok {
		return color.RGBA{}, validate.Reject(detailColourInput)
	}
	return c, nil
}

// HexColour is c as the contract writes colours: upper-case RRGGBB.
func HexColour(c color.RGBA) string {
	const digits = "0123456789ABCDEF"
	return string([]byte{digits[c.R>>4], digits[c.R&15], digits[c.G>>4], digits[c.G&15], digits[c.B>>4], digits[c.B&15]})
}

// styled reports whether o needs the design renderer: anything beyond the
// 6.3 options. Plain options keep the streaming 1-bit PNG path.
func (o Options) styled() bool {
	return (o.Modules != "" && o.Modules != ModulesSquare) || o.Logo != nil || o.Frame != nil
}

// withDesignRules applies the design's implied settings: a logo forces
// ECC H (it hides codewords that only H can recover).
func (o Options) withDesignRules() Options {
	if o.Logo != nil {
		o.ECC = ECCHigh
	}
	if o.Modules == "" {
		o.Modules = ModulesSquare
	}
	return o
}

// validateDesign adds the errors of the design fields: the module style
// and the frame's contrast with bg (the frame's text is drawn in bg on
// the frame colour, so the 3:1 rule of fg/bg applies to it too).
func (o Options) validateDesign(errs *validate.Errors) {
	if o.Modules != "" {
		if _, err := ParseModuleStyle(string(o.Modules)); err != nil {
			errs.Add("/modules", detailModules)
		}
	}
	if o.Frame != nil {
		if _, err := ParseFrameText(o.Frame.Text.s); err != nil {
			errs.Add("/frame/text", detailFrameText)
		}
		if r := ContrastRatio(o.Frame.Color, o.BG); r < MinContrast {
			errs.Add("/frame/color", contrastDetail("bg", r))
		}
	}
}
