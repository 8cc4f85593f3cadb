package httpmw

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// HeadAsGet answers HEAD like GET (net/http drops the body) on every path
// a GET route serves. Only the redirect registers HEAD, as /{code}, so chi
// sent HEAD /docs or HEAD /signin there, and they answered 404.
func HeadAsGet(mux *chi.Mux) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodHead && !hasOwnRoute(mux, http.MethodHead, r.URL.Path) {
				if hasOwnRoute(mux, http.MethodGet, r.URL.Path) {
					get := r.Clone(r.Context())
					get.Method = http.MethodGet
					next.ServeHTTP(w, get)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// hasOwnRoute reports whether a route other than the redirect's /{code}
// serves method on path.
func hasOwnRoute(mux *chi.Mux, method, path string) bool {
	p := mux.Find(chi.NewRouteContext(), method, path)
	return p != "" && p != "/{code}"
}
