// Package httpmw is the middleware every response of linkqr goes through,
// on every listener: panic recovery, metrics and request logs, the body
// deadline, security headers, and HEAD answered as GET. Each takes what it
// needs as arguments; internal/app chains them.
package httpmw

import (
	"net/http"
	"strings"
)

// pageCSP is the Content-Security-Policy of every page linkqr renders: the
// UI's stylesheet and script are files under /static on this origin, the
// templates contain no inline script, style or event handler, and QR
// previews are images from this origin, so nothing else is needed. A page
// that sets its own policy (/docs, whose renderer needs more) keeps it.
const pageCSP = "default-src 'self'; " +
	"script-src 'self'; " +
	"style-src 'self'; " +
	"img-src 'self'; " +
	"font-src 'self'; " +
	"connect-src 'self'; " +
	"object-src 'none'; " +
	"base-uri 'none'; " +
	"form-action 'self'; " +
	"frame-ancestors 'none'"

// hstsMaxAge is one year, the usual value for a site that serves https only.
const hstsMaxAge = "max-age=31536000"

// fixed returns a header value that may be shared by every response: its
// capacity equals its length, so a handler's Header().Add copies it rather
// than writing into the shared array.
func fixed(v string) []string { return []string{v}[:1:1] }

// SecurityHeaders adds the browser-hardening headers of
// docs/api.md#responses-and-headers: X-Content-Type-Options on every response (HSTS too when the base
// URL is https), and on documents a browser renders (HTML, SVG) a strict CSP,
// X-Frame-Options and Referrer-Policy. Which responses are documents is only
// known once the handler has chosen a Content-Type, so the document headers
// are added when the header is written; a redirect (no body, no type) stays
// as small as it was, with nosniff alone. https adds HSTS.
func SecurityHeaders(https bool) func(http.Handler) http.Handler {
	s := &securityHeaders{
		nosniff:      fixed("nosniff"),
		csp:          fixed(pageCSP),
		frameOptions: fixed("DENY"),
		referrer:     fixed("strict-origin-when-cross-origin"),
	}
	if https {
		s.hsts = fixed(hstsMaxAge)
	}
	return s.handler
}

// securityHeaders are SecurityHeaders' values, shared by every response.
type securityHeaders struct {
	nosniff, hsts               []string // hsts is nil on plain http
	csp, frameOptions, referrer []string
}

func (s *securityHeaders) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["X-Content-Type-Options"] = s.nosniff
		if s.hsts != nil {
			h["Strict-Transport-Security"] = s.hsts
		}
		next.ServeHTTP(&documentHeaderWriter{ResponseWriter: w, s: s}, r)
	})
}

// complete adds the document headers, unless the handler set its own.
func (s *securityHeaders) complete(h http.Header, status int) {
	if !isDocument(h.Get("Content-Type"), status) {
		return
	}
	if _, ok := h["Content-Security-Policy"]; !ok {
		h["Content-Security-Policy"] = s.csp
	}
	if _, ok := h["X-Frame-Options"]; !ok {
		h["X-Frame-Options"] = s.frameOptions
	}
	if _, ok := h["Referrer-Policy"]; !ok {
		h["Referrer-Policy"] = s.referrer
	}
}

// isDocument tells whether a response may be rendered by a browser as a
// page. Without a Content-Type net/http sniffs the body, which may well be
// HTML, so only bodiless redirects and 304s are left out in that case.
func isDocument(contentType string, status int) bool {
	if contentType == "" {
		return status < 300 || status >= 400
	}
	ct := strings.ToLower(contentType)
	return strings.HasPrefix(ct, "text/html") || strings.HasPrefix(ct, "application/xhtml+xml") ||
		strings.HasPrefix(ct, "image/svg+xml")
}

// documentHeaderWriter calls complete once, just before the header goes out.
type documentHeaderWriter struct {
	http.ResponseWriter
	s    *securityHeaders
	done bool
}

func (w *documentHeaderWriter) WriteHeader(code int) {
	if !w.done && code >= 200 { // 1xx are interim; the real header follows
		w.done = true
		w.s.complete(w.Header(), code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *documentHeaderWriter) Write(b []byte) (int, error) {
	if !w.done {
		w.done = true
		w.s.complete(w.Header(), http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes,
// deadlines).
func (w *documentHeaderWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
