// Package web is linkqr's server-rendered UI: templ components and the
// handlers that parse forms and render them. Handlers know HTTP and HTML;
// the domain packages they call know neither.
package web

import (
	"net/http"

	"github.com/a-h/templ"
)

// Render writes a component as an HTML response with the given status.
func Render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = c.Render(r.Context(), w)
}
