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
var knownParams = []string{"format", "size", "margin", "ecc", "fg", "bg", "logo"}

// Query is the QR endpoint's query, parsed: the options this one request
// sets. Apply lays them over the link's design (docs/api.md#qr-designs: the
// QR endpoint's parameters override the design for one request); the zero Query sets nothing.
type Query struct {
	o      Options
	set    map[string]bool
	noLogo bool
}

// ParseQuery checks every parameter of the QR endpoint's query. Every
// off-spec value, repeated parameter or unknown parameter becomes a
// validate.FieldError with pointer /query/<name>, all of them collected in
// one validate.Errors so a client can fix its request in one round trip.
// Matching is exact: format is lower-case (png, svg, pdf), ecc is
// upper-case (L, M, Q, H) as the contract spells them; hex digits of fg and
// bg may be either case and carry no leading '#'; logo is true or false.
// The contrast of the result is checked by Apply, which knows the design.
func ParseQuery(q url.Values) (Query, error) {
	out := Query{o: DefaultOptions(), set: map[string]bool{}}
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
		detail := ""
		if name == "logo" {
			detail = out.setLogo(vals[0])
		} else {
			detail = out.o.set(name, vals[0])
		}
		if detail != "" {
			errs.Add(pointer, detail)
			continue
		}
		out.set[name] = true
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
	if err := errs.Err(); err != nil {
		return Query{}, err
	}
	return out, nil
}

func (q *Query) setLogo(v string) string {
	switch v {
	case "true":
	case "false":
		q.noLogo = true
	default:
		return detailLogoFlag
	}
	return ""
}

// Apply returns base with the query's parameters laid over it, the logo
// left out for logo=false, and the design's rules (a logo forces ECC H).
// A result whose fg/bg contrast is below 3:1 is refused at /query/fg, a
// frame whose colour no longer contrasts with bg at /query/bg: such codes
// do not scan.
func (q Query) Apply(base Options) (Options, error) {
	o := base
	for name, set := range q.set {
		if !set {
			continue
		}
		switch name {
		case "format":
			o.Format = q.o.Format
		case "size":
			o.Size = q.o.Size
		case "margin":
			o.Margin = q.o.Margin
		case "ecc":
			o.ECC = q.o.ECC
		case "fg":
			o.FG = q.o.FG
		case "bg":
			o.BG = q.o.BG
		}
	}
	if q.noLogo {
		o.Logo = nil
	}
	o = o.withDesignRules()
	var errs validate.Errors
	if fe, ok := checkContrast(o.FG, o.BG); !ok {
		errs = append(errs, fe)
	}
	if o.Frame != nil {
		if d, ok := ContrastDetail(o.Frame.Color, o.BG, "the frame colour"); !ok {
			errs.Add("/query/bg", d)
		}
	}
	if err := errs.Err(); err != nil {
		return Options{}, err
	}
	return o, nil
}

// Format is the format the query asks for, or "" when it names none.
func (q Query) Format() Format {
	if q.set["format"] {
		return q.o.Format
	}
	return ""
}

// ParseOptions turns the QR endpoint's query into Options over the 6.3
// defaults (ParseQuery, then Apply to DefaultOptions): absent parameters
// take their defaults, and a fg/bg pair whose contrast is below 3:1 is
// refused at /query/fg, because such codes do not scan.
func ParseOptions(q url.Values) (Options, error) {
	pq, err := ParseQuery(q)
	if err != nil {
		return Options{}, err
	}
	return pq.Apply(DefaultOptions())
}

// set parses one known parameter into o and returns the error detail, or ""
// when the value is acceptable.
func (o *Options) set(name, v string) string {
	switch name {
	case "format":
		if f := Format(v); f.valid() {
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
