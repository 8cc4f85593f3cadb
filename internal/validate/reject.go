package validate

import "errors"

// DetailRepeated is the reason a query parameter given twice is refused.
const DetailRepeated = "must be given at most once"

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
