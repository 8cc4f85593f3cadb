package app

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/api"
	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/clientip"
	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/export"
	"github.com/linkqr/linkqr/internal/httpmw"
	"github.com/linkqr/linkqr/internal/idempotency"
	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/qrzip"
	"github.com/linkqr/linkqr/internal/requestid"
	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/session"
	"github.com/linkqr/linkqr/static"
	"github.com/linkqr/linkqr/web"
)

// routes builds the router of this process's roles: the health endpoints
// always (never /metrics: it is private, on LINKQR_METRICS_ADDR's listener,
// metricsRouter); the short links in the redirect
// role; the JSON API under /api, the UI, docs, OAuth and MCP in the api
// role. Whatever a role does not serve answers 404.
func (a *App) routes() chi.Router {
	r := a.registerRoutes()
	if a.Config.Roles.Redirect() {
		a.Redirects.Routed(r)
	}
	return r
}

// registerRoutes registers every route of this process's roles (routes).
func (a *App) registerRoutes() chi.Router {
	r := chi.NewRouter()
	a.use(r)
	r.Use(a.Redirects.CustomDomains(a.Config.Roles.Redirect(), "/healthz", "/readyz", "/static/"))
	r.Use(httpmw.HeadAsGet(r))

	r.Get("/healthz", a.healthz)
	r.Get("/readyz", a.readyz)
	r.Get("/.well-known/linkqr/tls-allowed", a.tlsAllowed)
	staticFS, _ := fs.Sub(static.FS, ".")
	// The redirect's own pages (404, 410, password) use the stylesheet too.
	if a.Config.Roles.API() || a.Config.Roles.Redirect() {
		r.Handle("/static/*", http.StripPrefix("/static/", cacheStatic(http.FileServerFS(staticFS))))
	}
	if !a.Config.Roles.API() {
		if a.Config.Roles.Redirect() {
			a.Redirects.Mount(r)
		}
		// The redirect's neutral 404 page: no UI to link to here.
		r.NotFound(web.RedirectPages().NotFound)
		return r
	}

	// One analytics reader for API and UI, so their reports share one
	// concurrency bound. It reads where lag is tolerated (a.Reads).
	reports := analytics.NewReports(a.Reads, a.analyticsLimits())
	ui := web.New(a.webDeps(reports))

	r.Get("/problems", func(w http.ResponseWriter, r *http.Request) {
		web.Render(w, r, http.StatusOK, web.ProblemIndex(ui.PublicNav(w, r), problem.Catalog))
	})
	r.Get("/problems/{slug}", a.problemPage(ui))

	v1 := a.apiV1(reports)
	r.Route("/api", func(r2 chi.Router) {
		r2.NotFound(a.apiNotFound)
		r2.MethodNotAllowed(a.apiMethodNotAllowed(r))
		r2.Route("/v1", v1.Routes)
	})
	a.mcpRoutes(r, v1)

	a.oauthRoutes(r)
	a.docsRoutes(r, ui)
	ui.Mount(r)
	if a.Config.Roles.Redirect() {
		a.Redirects.Mount(r)
	}

	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		web.Render(w, r, http.StatusNotFound, web.ErrorPageNav(ui.PublicNav(w, r), http.StatusNotFound, "Page not found", "There is nothing at this address."))
	})
	// Outside /api (which has its own): /mcp is an API and answers a
	// problem; pages answer an error page. Both list Allow.
	apiMethodNotAllowed := a.apiMethodNotAllowed(r)
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/mcp" {
			apiMethodNotAllowed(w, req)
			return
		}
		w.Header().Set("Allow", strings.Join(AllowedMethods(r, req.URL.Path), ", "))
		web.Render(w, req, http.StatusMethodNotAllowed, web.ErrorPageNav(ui.PublicNav(w, req), http.StatusMethodNotAllowed,
			"Method not allowed", req.Method+" is not something this page answers."))
	})
	return r
}

// tlsAllowed answers a TLS-terminating proxy that asks before obtaining a
// certificate for a name (Caddy's on-demand "ask"): 200 for a verified
// custom domain, 404 for anything else.
func (a *App) tlsAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	host := r.URL.Query().Get("domain")
	ok, err := a.Redirects.Servable(r.Context(), host)
	switch {
	case err != nil:
		w.Header().Set("Retry-After", "5")
		http.Error(w, "cannot tell now; ask again in a moment", http.StatusServiceUnavailable)
	case ok:
		_, _ = io.WriteString(w, "a verified custom domain: a certificate may be obtained\n")
	default:
		http.Error(w, "not a verified custom domain: no certificate", http.StatusNotFound)
	}
}

// use installs the middleware every response goes through, on either
// listener: request id, metrics and logs, the body deadline, security
// headers, and panic recovery innermost, so its error page gets the rest.
func (a *App) use(r chi.Router) {
	r.Use(requestid.Middleware,
		httpmw.Observe(a.Log, web.LogPath, r, a.Metrics.ObserveHTTP),
		httpmw.BodyDeadline(a.bodyTimeout),
		httpmw.SecurityHeaders(a.Config.BaseURL.Scheme == "https"),
		httpmw.Recover(a.Log, web.LogPath, a.problems, serverErrorPage))
}

// serverErrorPage is the page a browser gets for a handler's panic.
func serverErrorPage(w http.ResponseWriter, r *http.Request) {
	web.Render(w, r, http.StatusInternalServerError, web.ErrorPage(http.StatusInternalServerError,
		"Something went wrong", "The error has been logged. Please try again."))
}

// bodyTimeout is httpmw.BodyReadTimeout, or what a test set.
func (a *App) bodyTimeout() time.Duration {
	if d := time.Duration(a.bodyReadTimeout.Load()); d > 0 {
		return d
	}
	return httpmw.BodyReadTimeout
}

// MetricsHandler serves LINKQR_METRICS_ADDR: /metrics and nothing else.
// Serve runs it; tests that serve Handler on a listener of their own serve
// this beside it.
func (a *App) MetricsHandler() http.Handler { return a.metricsRouter() }

func (a *App) metricsRouter() chi.Router {
	r := chi.NewRouter()
	a.use(r)
	r.Method(http.MethodGet, "/metrics", a.Metrics.Handler())
	return r
}

func (a *App) apiV1(reports *analytics.Reports) *api.API {
	return &api.API{
		Log:         a.Log,
		Problems:    a.problems,
		BaseURL:     a.Config.BaseURL.String(),
		Links:       a.Links,
		QR:          a.QR,
		Designs:     a.Designs,
		Accounts:    a.Accounts,
		Scans:       scan.NewReader(a.Reads),
		Analytics:   reports,
		RateLimit:   a.rateLimit(),
		Webhooks:    a.Webhooks,
		Domains:     a.Domains,
		SSO:         a.SSO,
		Events:      &event.Reader{DB: a.DB, Stopping: a.draining.Load, Wakeup: a.eventWake},
		Audit:       audit.NewLog(a.DB),
		Database:    a.Database,
		Idempotency: &idempotency.Middleware{DB: a.DB, Problems: a.problems, Log: a.Log},
		Auth: &auth.Authenticator{
			Keys:     a.Keys,
			Roles:    a.Roles,
			OAuth:    a.OAuth,
			Problems: a.problems,
			ClientIP: clientip.Resolver{Trusted: a.Config.TrustedProxies},
			Log:      a.Log,
		},
	}
}

func (a *App) webDeps(reports *analytics.Reports) web.Deps {
	sessions := session.NewStore(a.DB, a.Log, session.Keys{
		Cookie:   config.DeriveKey(a.Config.SecretKey, "session-cookie"),
		DataAuth: config.DeriveKey(a.Config.SecretKey, "session-data-auth"),
		DataEnc:  config.DeriveKey(a.Config.SecretKey, "session-data-enc"),
	}, a.Config.BaseURL.Scheme == "https")
	sessions.ClientIP = clientip.Resolver{Trusted: a.Config.TrustedProxies}.Of
	return web.Deps{
		Analytics:    reports,
		Scans:        scan.NewReader(a.Reads),
		Idempotency:  &idempotency.Middleware{DB: a.DB, Problems: a.problems, Log: a.Log},
		Webhooks:     a.Webhooks,
		Domains:      a.Domains,
		SSO:          a.SSO,
		TwoFactor:    a.TwoFactor,
		OAuth:        a.OAuth,
		Links:        a.Links,
		QR:           a.QR,
		Designs:      a.Designs,
		UTMTemplates: a.UTMTemplates,
		Zip:          &qrzip.Writer{Links: a.Links, Designs: a.Designs, QR: a.QR},
		Config:       a.Config,
		Log:          a.Log,
		Accounts:     a.Accounts,
		Erasure:      a.Erasure,
		LinkImports:  a.LinkImports,
		Export:       export.New(a.DB, a.origins()),
		Audit:        audit.NewLog(a.DB),
		Keys:         a.Keys,
		ClientIP:     clientip.Resolver{Trusted: a.Config.TrustedProxies},
		Sessions:     sessions,
	}
}

func (a *App) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 only when the database answers and the process is not
// shutting down, so load balancers stop sending traffic in both cases.
// During a known outage it answers at once, without a connection attempt.
func (a *App) readyz(w http.ResponseWriter, r *http.Request) {
	if a.draining.Load() {
		a.problems.Write(w, r, problem.New(problem.Unavailable, "the server is shutting down"))
		return
	}
	if !a.Database.Up() {
		a.problems.Write(w, r, problem.New(problem.Unavailable, "the database is not reachable"))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Second)
	defer cancel()
	if err := a.Pool.Ping(ctx); err != nil {
		a.Database.Observe(err)
		a.Log.Warn("readiness check failed", "err", err)
		a.problems.Write(w, r, problem.New(problem.Unavailable, "the database is not reachable"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (a *App) problemPage(ui *web.UI) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, ok := problem.Lookup(chi.URLParam(r, "slug"))
		if !ok {
			web.Render(w, r, http.StatusNotFound, web.ErrorPageNav(ui.PublicNav(w, r), http.StatusNotFound, "Unknown problem type", "linkqr has no problem type of that name."))
			return
		}
		web.Render(w, r, http.StatusOK, web.ProblemPage(ui.PublicNav(w, r), t, a.problems.TypeURL(t)))
	}
}

func (a *App) apiNotFound(w http.ResponseWriter, r *http.Request) {
	a.problems.Write(w, r, problem.New(problem.NotFound, "no API route matches "+r.Method+" "+r.URL.Path))
}

// apiMethodNotAllowed answers 405 with the Allow header listing the methods
// the matched route does accept.
func (a *App) apiMethodNotAllowed(root chi.Routes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		allowed := AllowedMethods(root, r.URL.Path)
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		a.problems.Write(w, r, problem.New(problem.MethodNotAllowed,
			r.Method+" is not allowed on "+r.URL.Path+"; allowed: "+strings.Join(allowed, ", ")))
	}
}

// AllowedMethods lists the methods for which root has a route at path.
func AllowedMethods(root chi.Routes, path string) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if root.Match(chi.NewRouteContext(), m, path) {
			out = append(out, m)
		}
	}
	return out
}

func cacheStatic(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		h.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
