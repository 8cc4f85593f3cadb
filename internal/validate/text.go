package validate

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The reasons Text gives, phrased to follow a field name.
const (
	DetailNotUTF8  = "must be valid UTF-8 text"
	DetailControl  = "must not contain control characters such as NUL, tabs or line breaks"
	DetailRepeated = "must be given at most once"
)

// Text is the one rule for every single-line text field a person or an
// integrator types (a link title, a workspace or key name, an e-mail
// address): valid UTF-8 without control characters (Unicode category Cc:
// U+0000–U+001F and U+007F–U+009F). PostgreSQL cannot store a NUL or
// invalid UTF-8 at all, and a tab or line break in a one-line label only
// ever hides or forges what a reader sees; refusing them here turns what
// would be a database error (a 500) into a field error.
func Text(s string) error {
	if !utf8.ValidString(s) {
		return Reject(DetailNotUTF8)
	}
	if strings.ContainsFunc(s, unicode.IsControl) {
		return Reject(DetailControl)
	}
	return nil
}

// Rejection is why a single value was refused, without naming its field:
// the parse functions of value types return it, and the edge that knows
// where the value came from attaches the JSON pointer (Errors.Check), so the
// same parse function serves a body field, a query parameter or a form.
type Rejection struct{ Detail string }

func (r *Rejection) Error() string { return r.Detail }

// Reject returns a Rejection with this detail ("must be …").
func Reject(detail string) error { return &Rejection{Detail: detail} }

// IsRejection reports whether err is a refused value rather than a failure
// of something else.
func IsRejection(err error) bool {
	var r *Rejection
	return errors.As(err, &r)
}

// Check adds err's detail under pointer when err is not nil and reports
// whether it was nil, so a decoder collects every field's error in one pass:
// `title, err := link.ParseTitle(s); errs.Check("/title", err)`.
func (e *Errors) Check(pointer string, err error) bool {
	if err == nil {
		return true
	}
	e.Add(pointer, err.Error())
	return false
}
