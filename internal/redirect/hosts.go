package redirect

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// hosts recognises the Host headers of the default domain: those of
// LINKQR_SHORT_BASE_URL and LINKQR_BASE_URL, any case, any port. The
// exact spellings of the configured origins are compared first, so the
// usual request costs a string comparison or two.
type hosts struct {
	exact []string
	names map[string]bool
}

// loopbackNames are the names of this machine: a development install on
// one of them (the default LINKQR_BASE_URL is http://127.0.0.1:8080)
// answers on all of them, so http://localhost:8080 works too.
var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

func newHosts(origins []string) hosts {
	h := hosts{names: map[string]bool{}}
	for _, o := range origins {
		u, err := url.Parse(o)
		if err != nil || u.Host == "" {
			continue
		}
		h.exact = append(h.exact, u.Host)
		h.names[canonicalHost(u.Host)] = true
	}
	for _, l := range loopbackNames {
		if h.names[l] {
			for _, name := range loopbackNames {
				h.names[name] = true
			}
		}
	}
	return h
}

// isDefault reports whether a Host header names the default domain. A
// request without one (HTTP/1.0) can only mean it.
func (h hosts) isDefault(host string) bool {
	for _, e := range h.exact {
		if host == e {
			return true
		}
	}
	return host == "" || h.names[canonicalHost(host)]
}

// canonicalHost is a Host header (or TLS server name) as a hostname is
// stored: without the port and the trailing dot of a fully qualified
// name, lowercase.
func canonicalHost(host string) string {
	if strings.IndexByte(host, ':') >= 0 { // a port, or an IPv6 literal (no error allocated per request otherwise)
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
	}
	host = strings.TrimSuffix(host, ".")
	for i := 0; i < len(host); i++ {
		if c := host[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(host)
		}
	}
	return host
}

// CustomDomains routes on Host. The default domain's requests go on to
// next. A verified custom domain's are answered here: GET or HEAD / goes
// to the domain's root URL, /{code} to its link (or its not-found URL),
// and anything else is the 404 page. Any other host gets the 404 page,
// except for anyHost paths: exact ones (health probes, which load
// balancers send with whatever Host) on hosts that are not custom
// domains, where a single segment is a code; those ending in "/" (static
// assets, which the 404 page uses) on any host. So no UI, API or docs are served on a name that is not
// ours, and no session cookie is ever set on a customer's domain.
// serveCodes is false in a process without the redirect role: its
// custom-domain requests all answer 404.
func (h *Handler) CustomDomains(serveCodes bool, anyHost ...string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if h.hosts.isDefault(r.Host) {
				if code, ok := h.unrouted.code(r); ok && serveCodes {
					asRouted(r, code)
					h.serveCode(w, r, "", code, nil)
					return
				}
				next.ServeHTTP(w, r)
				return
			}
			host := canonicalHost(r.Host)
			site, err := h.sites.lookup(r.Context(), host)
			switch {
			case err != nil:
				// Whether this is a custom domain is unknown: never
				// serve the UI on what may be a customer's name.
				h.log.Log(r.Context(), logLevel(err), "custom domain lookup failed", "host", host, "err", err)
				h.unavailable(w, r)
			case site == nil && passes(anyHost, r.URL.Path, true):
				next.ServeHTTP(w, r)
			case site == nil:
				h.pages.NotFound(w, r)
			case passes(anyHost, r.URL.Path, false): // the 404 page's stylesheet
				next.ServeHTTP(w, r)
			case !serveCodes || (r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPost):
				h.pages.NotFound(w, r)
			case r.Method == http.MethodPost && (r.URL.Path == "/" || strings.Count(r.URL.Path, "/") != 1):
				h.pages.NotFound(w, r) // only a password form posts, to its code
			case r.URL.Path == "/" && site.RootURL != nil:
				found(w, *site.RootURL)
			case r.URL.Path == "/" || strings.Count(r.URL.Path, "/") != 1:
				h.pages.NotFound(w, r)
			default:
				// Labelled as the default domain's codes are (metrics
				// by route pattern).
				asRouted(r, r.URL.Path[1:])
				h.serveCode(w, r, host, r.URL.Path[1:], site)
			}
		})
	}
}

// passes reports whether path is one of anyHost: a prefix ending in "/",
// or, with exact, the very path.
func passes(anyHost []string, path string, exact bool) bool {
	for _, p := range anyHost {
		if strings.HasSuffix(p, "/") && strings.HasPrefix(path, p) || exact && path == p {
			return true
		}
	}
	return false
}
