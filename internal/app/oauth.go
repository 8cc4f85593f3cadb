package app

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/clientip"
	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/ratelimit"
)

// newOAuth builds the authorization server and makes sure a signing key
// (and its published successor) exists before the first request.
func (a *App) newOAuth(ctx context.Context) error {
	svc, err := oauth.NewService(oauth.Options{
		DB:               a.DB,
		Log:              a.Log.With("component", "oauth"),
		Issuer:           strings.TrimSuffix(a.Config.BaseURL.String(), "/"),
		KeyEncryptionKey: config.DeriveKey(a.Config.SecretKey, "oauth-signing-keys"),
	})
	if err != nil {
		return err
	}
	svc.Subscribe(a.listener)
	if err := svc.EnsureKeys(ctx); err != nil {
		return err
	}
	a.OAuth = svc
	return nil
}

// oauthRoutes mounts the endpoints of docs/api.md#oauth-20 that are not
// pages: the token, revocation and registration endpoints and the
// discovery documents.
// Other methods on them get a 405 problem; /oauth/authorize is a page (web).
func (a *App) oauthRoutes(r chi.Router) {
	h := &oauth.Handlers{Service: a.OAuth}
	r.Get("/.well-known/oauth-authorization-server", h.Metadata)
	r.Get("/.well-known/jwks.json", h.JWKS)
	r.Post("/oauth/token", h.Token)
	r.Post("/oauth/revoke", h.Revoke)
	r.With(a.registrationLimit().Handler, a.registrationCap()).Post("/oauth/register", h.Register)
	for _, p := range []string{"/oauth/token", "/oauth/revoke", "/oauth/register"} {
		for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			r.Method(m, p, a.oauthMethodNotAllowed("POST"))
		}
	}
	// Any other path under /oauth/ (but the authorize page, which web
	// mounts) is a 404 problem, like an unknown /api path.
	r.Handle("/oauth/*", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.problems.Write(w, r, problem.New(problem.NotFound, "no OAuth endpoint at "+r.URL.Path))
	}))
}

func (a *App) oauthMethodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		a.problems.Write(w, r, problem.New(problem.MethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path+"; allowed: "+allow))
	}
}

// registrationCap bounds dynamic client registration for the whole
// service (LINKQR_OAUTH_REGISTRATION_HOURLY_CAP an hour, from all
// addresses, counted across instances when Redis is configured): 429
// rate-limited with Retry-After beyond it.
func (a *App) registrationCap() func(http.Handler) http.Handler {
	c := &oauth.RegistrationCap{Cap: a.Config.OAuthRegistrationHourlyCap, Counter: a.Counter}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ok, wait, err := c.Take(r.Context())
			if err != nil {
				return // the client went away
			}
			if !ok {
				w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))))
				a.problems.Write(w, r, problem.New(problem.RateLimited,
					"this server has registered as many OAuth clients this hour as it allows; retry after Retry-After seconds"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// registrationLimit bounds dynamic client registration, which needs no
// credential, per client address (LINKQR_OAUTH_REGISTRATION_RATE_LIMIT a
// minute): 429 rate-limited with Retry-After beyond it.
func (a *App) registrationLimit() *ratelimit.Middleware {
	ips := clientip.Resolver{Trusted: a.Config.TrustedProxies}
	return &ratelimit.Middleware{Limiter: a.RateLimiter, Problems: a.problems, Log: a.Log,
		Subject: func(r *http.Request) (string, int, bool) {
			return "oauth-register:" + ips.Of(r).String(), a.Config.OAuthRegistrationRate, true
		}}
}
