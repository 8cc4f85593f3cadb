package app

import (
	"context"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/api"
	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/mcp"
	"github.com/linkqr/linkqr/internal/scope"
)

// mcpRoutes mounts the MCP endpoint and its RFC 9728 metadata. Tools
// dispatch to this process's own router (so to /api/v1 with all its
// middleware), behind the same bearer middleware as the API.
//
// "mcp" is not a reserved code (docs/api.md#links-codes-targets-and-titles
// does not list it), so /mcp
// is also the short URL of a link with that code: MCP clients POST (and
// DELETE a session) there, and GET it only to open an event stream; any
// other GET or HEAD is the redirect's.
func (a *App) mcpRoutes(r *chi.Mux, v1 *api.API) {
	server := mcp.Handler(mcp.Config{
		API: http.HandlerFunc(a.dispatchInProcess),
		// Tokens for the MCP resource (aud …/mcp) are accepted here and in
		// the API requests the tools dispatch, nowhere else.
		Authenticate: func(next http.Handler) http.Handler { return auth.ForMCP(v1.Auth.Middleware(next)) },
		Document:     api.OpenAPIJSON(),
		ResourceMetadataURL: func() string {
			return strings.TrimSuffix(a.Config.BaseURL.String(), "/") + "/.well-known/oauth-protected-resource/mcp"
		},
		Log: a.Log,
	})
	r.Post("/mcp", server.ServeHTTP)
	r.Delete("/mcp", server.ServeHTTP)
	r.Get("/mcp", func(w http.ResponseWriter, req *http.Request) {
		if strings.Contains(req.Header.Get("Accept"), "text/event-stream") {
			server.ServeHTTP(w, req)
			return
		}
		a.mcpCode(r, w, req)
	})
	r.Head("/mcp", func(w http.ResponseWriter, req *http.Request) { a.mcpCode(r, w, req) })
	r.Get("/.well-known/oauth-protected-resource", a.protectedResource(""))
	r.Get("/.well-known/oauth-protected-resource/mcp", a.protectedResource("/mcp"))
	r.Get("/.well-known/oauth-protected-resource/api/v1", a.protectedResource("/api/v1"))
}

// mcpCode answers a GET or HEAD of /mcp that is not MCP's: the short link
// "mcp" where this process serves short links, else the router's 404.
func (a *App) mcpCode(root *chi.Mux, w http.ResponseWriter, r *http.Request) {
	if a.Config.Roles.Redirect() {
		a.Redirects.ServeCode(w, r, "mcp")
		return
	}
	root.NotFoundHandler().ServeHTTP(w, r)
}

// dispatchInProcess routes a request that a tool built from scratch. The
// tool's context descends from the /mcp request, whose chi routing context
// chi would otherwise reuse (and so route /api/v1/… as if it were /mcp).
func (a *App) dispatchInProcess(w http.ResponseWriter, r *http.Request) {
	a.router.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, nil)))
}

// protectedResource serves the RFC 9728 document for the resource at
// path under the base URL, naming this issuer (its
// /.well-known/oauth-authorization-server) as its authorization server.
func (a *App) protectedResource(path string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		base := strings.TrimSuffix(a.Config.BaseURL.String(), "/")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		writeJSON(w, http.StatusOK, mcp.ProtectedResourceMetadata(base, base+path, scope.Strings(scope.All)))
	}
}
