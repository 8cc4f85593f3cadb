// Package web is linkqr's server-rendered UI: templ components and the
// handlers that parse forms and render them. Handlers know HTTP and HTML;
// the domain packages they call know neither.
package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"github.com/linkqr/linkqr/internal/redirect"
)

// StatusPage returns a handler that answers with a neutral page (no
// linkqr navigation: the visitor scanned someone's code), never to be
// reused from a cache.
func StatusPage(status int, title, message string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "private, no-cache")
		Render(w, r, status, NeutralPage(status, title, message, "status-"+strconv.Itoa(status)))
	}
}

// RedirectPages are the pages of a short URL that does not redirect. None
// may be cached: a paused link is resumed, an unknown code may be created,
// and the very next visit must see it (browsers may otherwise keep a 404
// or 410 heuristically).
func RedirectPages() redirect.Pages {
	return redirect.Pages{
		NotFound: StatusPage(http.StatusNotFound, "Link not found",
			"There is no link at this address. Check the code and try again."),
		Gone: StatusPage(http.StatusGone, "Link no longer available",
			"This link has expired or was removed by its owner, and no longer leads anywhere."),
		Paused: StatusPage(http.StatusGone, "This link is paused",
			"Its owner has paused this link for now. It may work again later; try again another time."),
		Unavailable: StatusPage(http.StatusServiceUnavailable, "Temporarily unavailable",
			"This link cannot be opened right now. Please try again in a moment."),
		Limit: StatusPage(http.StatusGone, "This link has reached its scan limit",
			"It was set to work a limited number of times, and it has. Its owner may raise the limit."),
		Password: func(w http.ResponseWriter, r *http.Request, f redirect.PasswordForm) {
			w.Header().Set("Cache-Control", "private, no-store")
			w.Header().Set("Content-Security-Policy", passwordPageCSP)
			Render(w, r, f.Status, LinkPasswordPage(f.Error))
		},
	}
}

// passwordPageCSP is the pages' policy, except that the form may lead
// anywhere: the right password answers a 302 to the link's destination,
// which a browser checks against form-action like the form's own URL. The
// page has no script and shows nothing of the link.
const passwordPageCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self' https: http:; frame-ancestors 'none'"

// Render writes a component as an HTML response with the given status.
func Render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = c.Render(r.Context(), w)
}

// LogPath is a request path as logs may show it: the token of an
// invitation or password reset link is a secret, so it is cut out.
func LogPath(p string) string {
	for _, prefix := range []string{"/invitations/", "/password/reset/"} {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			_, tail, found := strings.Cut(rest, "/")
			if found {
				return prefix + "…/" + tail
			}
			return prefix + "…"
		}
	}
	return p
}
