package problem

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/linkqr/linkqr/internal/requestid"
	"github.com/linkqr/linkqr/internal/validate"
)

// ContentType is the media type of every problem body.
const ContentType = "application/problem+json"

// Problem is one occurrence of a Type. It is an error, so domain and handler
// code can return it and let the edge write it.
type Problem struct {
	Type          Type
	Detail        string                // specific to this occurrence; defaults to the type's title
	Errors        []validate.FieldError // for validation-failed
	RequiredScope string                // for insufficient-scope
}

// Error implements error.
func (p *Problem) Error() string { return p.Type.Slug + ": " + p.Detail }

// New makes a problem with a specific detail.
func New(t Type, detail string) *Problem { return &Problem{Type: t, Detail: detail} }

// Validation wraps field errors into a validation-failed problem.
func Validation(errs validate.Errors) *Problem {
	return &Problem{Type: ValidationFailed, Detail: errs.Summary(), Errors: errs}
}

// Body is the wire form; field order follows RFC 9457's examples.
type Body struct {
	Type          string                `json:"type"`
	Title         string                `json:"title"`
	Status        int                   `json:"status"`
	Detail        string                `json:"detail"`
	Instance      string                `json:"instance"`
	RequestID     string                `json:"request_id"`
	Errors        []validate.FieldError `json:"errors,omitempty"`
	RequiredScope string                `json:"required_scope,omitempty"`
}

// Writer renders problems with type URIs under the public base URL.
type Writer struct {
	BaseURL string // e.g. "https://linkqr.example.com", no trailing slash
}

// TypeURL is the dereferenceable URI of a problem type.
func (pw Writer) TypeURL(t Type) string {
	return strings.TrimSuffix(pw.BaseURL, "/") + "/problems/" + t.Slug
}

// Write sends p as application/problem+json. Headers that belong to the
// problem (Allow, WWW-Authenticate, Retry-After) are set by the caller first.
func (pw Writer) Write(w http.ResponseWriter, r *http.Request, p *Problem) {
	b := pw.Object(r, p)
	if b.RequestID == "" {
		b.RequestID = w.Header().Get(requestid.Header)
	}
	buf, err := json.Marshal(b)
	if err != nil { // cannot happen for this struct; keep the response well-formed anyway
		buf = []byte(`{"type":"` + pw.TypeURL(Internal) + `","title":"Internal server error","status":500}`)
	}
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("Cache-Control", "no-store")
	h.Del("Content-Length")
	w.WriteHeader(p.Type.Status)
	_, _ = w.Write(append(buf, '\n'))
}

// Object is p as the JSON object Write sends, for a response that carries
// problems inside it (one per item of a bulk creation).
func (pw Writer) Object(r *http.Request, p *Problem) Body {
	detail := p.Detail
	if detail == "" {
		detail = p.Type.Title
	}
	return Body{
		Type:          pw.TypeURL(p.Type),
		Title:         p.Type.Title,
		Status:        p.Type.Status,
		Detail:        detail,
		Instance:      r.URL.EscapedPath(), // a uri-reference, as the schema says: "/links/%C3%A4%20x", never a raw NUL
		RequestID:     requestid.FromContext(r.Context()),
		Errors:        p.Errors,
		RequiredScope: p.RequiredScope,
	}
}
