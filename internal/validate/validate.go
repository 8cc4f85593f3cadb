// Package validate carries field-level validation failures from the domain to
// the edge. Domain packages return Errors; the API maps them to a 422
// validation-failed problem whose errors[] keeps each JSON pointer, so an
// integrator can tell exactly which field or query parameter to fix.
package validate

import (
	"strconv"
	"strings"
)

// FieldError is one rejected input. Pointer is a JSON pointer into the request
// body ("/target_url") or, for query parameters, "/query/<name>".
type FieldError struct {
	Pointer string `json:"pointer"`
	Detail  string `json:"detail"`
}

// Errors is a non-empty list of field errors; it is an error itself so domain
// functions can return it through ordinary error paths.
type Errors []FieldError

// Error joins the details with their fields, for logs and wrapped errors.
func (e Errors) Error() string {
	parts := make([]string, len(e))
	for i, fe := range e {
		parts[i] = fieldName(fe.Pointer) + " " + fe.Detail
	}
	return strings.Join(parts, "; ")
}

// Add appends a field error.
func (e *Errors) Add(pointer, detail string) {
	*e = append(*e, FieldError{Pointer: pointer, Detail: detail})
}

// Err returns e as an error, or nil when nothing was added, so callers can end
// a validation function with `return errs.Err()`.
func (e Errors) Err() error {
	if len(e) == 0 {
		return nil
	}
	return e
}

// Summary is the human sentence for a problem's detail: the first error, named
// by its field ("target_url must be an absolute http or https URL"), plus a
// count of the rest.
func (e Errors) Summary() string {
	if len(e) == 0 {
		return ""
	}
	s := fieldName(e[0].Pointer) + " " + e[0].Detail
	if n := len(e) - 1; n == 1 {
		s += " (and 1 more error)"
	} else if n > 1 {
		s += " (and " + strconv.Itoa(n) + " more errors)"
	}
	return s
}

// fieldName turns "/query/size" into "size" and "/target_url" into "target_url".
func fieldName(pointer string) string {
	p := strings.TrimPrefix(pointer, "/query")
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return "request"
	}
	return strings.ReplaceAll(p, "/", ".")
}
