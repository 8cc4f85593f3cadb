package qr

import (
	"image/color"
	"net/url"
	"slices"
	"strings"

	"github.com/linkqr/linkqr/internal/validate"
)

// knownParams lists the query parameters of the QR endpoint in the order
// their errors are reported, so responses are stable for clients and tests.
var knownParams = []string{"format", "size", "margin", "ecc", "fg", "bg"}

// ParseOptions turns the QR endpoint's query into Options. Absent parameters
// take their defaults; every off-spec value, repeated parameter or unknown
// parameter becomes a validate.FieldError with pointer /query/<name>, all of
// them collected in one validate.Errors so a client can fix its request in one
// round trip. Matching is exact: format is lower-case (png, svg), ecc is
// upper-case (L, M, Q, H) as the contract spells them; hex digits of fg and bg
// may be either case and carry no leading '#'. A fg/bg pair whose contrast is
// below 3:1 is refused at /query/fg, because such codes do not scan.
func ParseOptions(q url.Values) (Options, error) {
	o := DefaultOptions()
	var errs validate.Errors

	for _, name := range knownParams {
		vals, ok := q[name]
		if !ok {
			continue
		}
		pointer := "/query/" + name
		if len(vals) != 1 {
			errs.Add(pointer, detailRepeat)
			continue
		}
		if detail := o.set(name, vals[0]); detail != "" {
			errs.Add(pointer, detail)
		}
	}

	unknown := make([]string, 0, len(q))
	for name := range q {
		if !slices.Contains(knownParams, name) {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		errs.Add("/query/"+escapePointer(name), detailUnknown)
	}

	if !hasPointer(errs, "/query/fg") && !hasPointer(errs, "/query/bg") {
		if fe, ok := checkContrast(o.FG, o.BG); !ok {
			errs = append(errs, fe)
		}
	}
	if err := errs.Err(); err != nil {
		return Options{}, err
	}
	return o, nil
}

// set parses one known parameter into o and returns the error detail, or ""
// when the value is acceptable.
func (o *Options) set(name, v string) string {
	switch name {
	case "format":
		if f := Format(v); f == FormatPNG || f == FormatSVG {
			o.Format = f
			return ""
		}
		return detailFormat
	case "size":
		n, ok := parseDecimal(v, MinSize, MaxSize)
		if !ok {
			return detailSize
		}
		o.Size = n
	case "margin":
		n, ok := parseDecimal(v, MinMargin, MaxMargin)
		if !ok {
			return detailMargin
		}
		o.Margin = n
	case "ecc":
		if _, ok := recoveryLevel(ECC(v)); !ok {
			return detailECC
		}
		o.ECC = ECC(v)
	case "fg", "bg":
		c, ok := parseHexColour(v)
		if !ok {
			return detailColour
		}
		if name == "fg" {
			o.FG = c
		} else {
			o.BG = c
		}
	}
	return ""
}

// parseDecimal accepts only ASCII digits (no sign, no spaces, no fraction)
// and a value within [lo, hi]. strconv.Atoi would also take "+64", which the
// contract's "integer" does not mean to invite.
func parseDecimal(s string, lo, hi int) (int, bool) {
	if s == "" || len(s) > 6 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n >= lo && n <= hi
}

// parseHexColour reads exactly six hex digits, RRGGBB, as an opaque colour.
func parseHexColour(s string) (color.RGBA, bool) {
	if len(s) != 6 {
		return color.RGBA{}, false
	}
	var b [3]byte
	for i := 0; i < 6; i++ {
		d, ok := hexDigit(s[i])
		if !ok {
			return color.RGBA{}, false
		}
		b[i/2] = b[i/2]<<4 | d
	}
	return color.RGBA{b[0], b[1], b[2], 0xff}, true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// escapePointer escapes a parameter name as a JSON pointer reference token
// (RFC 6901), so a name like "a/b" cannot forge a deeper pointer.
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func hasPointer(errs validate.Errors, pointer string) bool {
	for _, fe := range errs {
		if fe.Pointer == pointer {
			return true
		}
	}
	return false
}
