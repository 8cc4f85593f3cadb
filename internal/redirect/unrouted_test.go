package redirect

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
)

// TestUnroutedCodes: a default-domain request is answered without the
// router only when the router would have sent it to /{code}.
func TestUnroutedCodes(t *testing.T) {
	t.Parallel()
	noop := func(http.ResponseWriter, *http.Request) {}
	r := chi.NewRouter()
	r.Get("/", noop) // the home page: no segment, never a code's
	r.Get("/docs", noop)
	r.Get("/{code}", noop)
	r.Post("/{code}", noop)
	r.Route("/api", func(r chi.Router) { r.Get("/v1/links", noop) })
	r.Get("/w/{ws}/links", noop)
	r.Handle("/static/*", http.HandlerFunc(noop))
	h := &Handler{}
	if _, ok := h.unrouted.code(httptest.NewRequest(http.MethodGet, "/Ab3xY9q", nil)); ok {
		t.Fatal("answered without the router before Routed")
	}
	h.Routed(r)
	if !h.BypassesRouter() {
		t.Fatal("Routed found a route that may share a segment with a code")
	}
	for target, want := range map[string]string{
		"/Ab3xY9q": "Ab3xY9q", "/docsx": "docsx", "/favicon.ico": "favicon.ico",
		"/docs": "", "/api": "", "/w": "", "/static": "", "/": "", "/Ab3xY9q/": "", "/a/b": "", "/%41b": "",
	} {
		code, ok := h.unrouted.code(httptest.NewRequest(http.MethodGet, target, nil))
		if code != want || ok != (want != "") {
			t.Errorf("GET %s: %q, %v; want %q", target, code, ok, want)
		}
	}
	for method, want := range map[string]bool{http.MethodHead: true, http.MethodPost: true, http.MethodPut: false, http.MethodDelete: false} {
		if _, ok := h.unrouted.code(httptest.NewRequest(method, "/Ab3xY9q", nil)); ok != want {
			t.Errorf("%s /Ab3xY9q answered without the router: %v, want %v", method, ok, want)
		}
	}

	// A route that may share a segment with a code turns it off.
	r.Get("/{slug}.png", noop)
	h.Routed(r)
	if _, ok := h.unrouted.code(httptest.NewRequest(http.MethodGet, "/Ab3xY9q", nil)); ok || h.BypassesRouter() {
		t.Error("answered without the router beside /{slug}.png")
	}
}
