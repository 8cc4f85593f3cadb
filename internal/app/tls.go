package app

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/certs"
	"github.com/linkqr/linkqr/internal/config"
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
		Key: config.DeriveKey(a.Config.SecretKey, "acme-cache"),
		Log: a.Log.With("component", "certs"),
	})
	if err != nil {
		return err
	}
	a.Metrics.Registry.MustRegister(m.Certificates)
	a.Certs = m
	return nil
}

// outermost wraps the complete handler with what must see a request before
// any routing: the ACME HTTP-01 challenges, whichever host they are for.
func (a *App) outermost(h http.Handler) http.Handler {
	if a.Certs == nil {
		return h
	}
	return a.Certs.HTTPHandler(h)
}
