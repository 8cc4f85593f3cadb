package redirect

import (
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/go-chi/chi/v5"
)

// unrouted holds the first path segments that the router's routes use
// (docs, api, healthz, w, …). A default-domain request for one segment
// that none of them uses can only reach GET, HEAD or POST /{code}, so
// CustomDomains answers it at once, as it does a custom domain's, without
// the router's matching: the default domain's redirect costs what a custom
// domain's does. nil until Routed is called (and after it found a route
// that could share a segment with a code): every request goes through the
// router.
type unrouted struct {
	taken atomic.Pointer[map[string]bool]
}

// Routed tells the handler the finished router, whose /{code} routes it
// serves (Mount). Call it once every route is registered.
func (h *Handler) Routed(routes chi.Routes) {
	taken := map[string]bool{}
	ok := true
	_ = chi.Walk(routes, func(_ string, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		first, _, _ := strings.Cut(strings.TrimPrefix(route, "/"), "/")
		switch {
		case route == "/{code}":
		case strings.ContainsAny(first, "{*"):
			ok = false // a pattern that may match a code's segment
		case first != "": // "/" has no segment: never a code's
			taken[first] = true
		}
		return nil
	})
	if !ok {
		h.unrouted.taken.Store(nil)
		return
	}
	h.unrouted.taken.Store(&taken)
}

// BypassesRouter reports whether the default domain's codes are answered
// without the router: Routed was called and found no route that may share
// a segment with a code.
func (h *Handler) BypassesRouter() bool { return h.unrouted.taken.Load() != nil }

// code returns the code segment of r when the router would send it to
// /{code}: GET, HEAD or POST of one segment that no other route starts
// with, spelt without escapes (chi routes on the escaped path).
func (u *unrouted) code(r *http.Request) (string, bool) {
	taken := u.taken.Load()
	if taken == nil || (r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPost) || r.URL.RawPath != "" {
		return "", false
	}
	p := r.URL.Path
	if len(p) < 2 || p[0] != '/' || strings.IndexByte(p[1:], '/') >= 0 || (*taken)[p[1:]] {
		return "", false
	}
	return p[1:], true
}

// asRouted records on r's routing context what the router would have: the
// route pattern (request metrics are labelled with it) and the code.
func asRouted(r *http.Request, code string) {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		rc.RoutePatterns = append(rc.RoutePatterns, "/{code}")
		rc.URLParams.Add("code", code)
	}
}
