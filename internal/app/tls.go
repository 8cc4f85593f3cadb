package app

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/certs"
	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/domain"
)

// newCerts sets up on-demand TLS for verified custom domains
// (LINKQR_TLS_ADDR): certificates for the names the redirect serves (its
// in-memory domain table, so a handshake costs no query), kept in
// PostgreSQL and shared by every instance.
func (a *App) newCerts() error {
	c := a.Config.TLS
	m, err := certs.New(certs.Options{
		DB: a.DB, Allowed: a.Redirects.Servable,
		Directory: c.Directory, Email: c.Email, Roots: c.CARoots,
		Key: a.acmeCacheKey(), Log: a.Log.With("component", "certs"),
	})
	if err != nil {
		return err
	}
	a.Metrics.Registry.MustRegister(m.Certificates)
	a.Certs = m
	return nil
}

// acmeCacheKey seals what acme_cache keeps.
func (a *App) acmeCacheKey() []byte { return config.DeriveKey(a.Config.SecretKey, "acme-cache") }

// certificateStates reads the custom domains' certificate states for their
// pages when linkqr terminates TLS; nil when a proxy does. Every instance
// reads them (an api process shows what a redirect process obtained), so
// LINKQR_TLS_ADDR is set alike on every process of a deployment.
func (a *App) certificateStates() (domain.Certificates, error) {
	c := a.Config.TLS
	if !c.Enabled() {
		return nil, nil
	}
	return certs.NewCache(a.DB, c.Directory, a.acmeCacheKey(), a.Log.With("component", "certs"))
}

// outermost wraps the complete handler with what must see a request before
// any routing: the ACME HTTP-01 challenges, whichever host they are for.
func (a *App) outermost(h http.Handler) http.Handler {
	if a.Certs == nil {
		return h
	}
	return a.Certs.HTTPHandler(h)
}
