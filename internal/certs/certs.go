// Package certs obtains TLS certificates on demand, by ACME, for verified
// custom domains, so a workspace's short links work over HTTPS on its own
// hostname without an operator lifting a finger. It wraps
// golang.org/x/crypto/acme/autocert: the first handshake for a verified
// domain orders a certificate (TLS-ALPN-01 on the TLS listener, or HTTP-01
// through the plain one), later handshakes are served from memory or from
// PostgreSQL, which every instance shares. A handshake for any other name
// gets no certificate: the names are the CA's rate limits and our
// reputation, so nobody may make us order one for a hostname they invent.
package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"

	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/store"
)

// Options configure a Manager.
type Options struct {
	DB *store.DB
	// Allowed says whether host may have a certificate: a verified domain of
	// a live workspace (redirect.Handler.Servable, from memory). It is asked on every full
	// handshake, so a removed domain stops being served at once, even with
	// its certificate still cached.
	Allowed   func(ctx context.Context, host string) (bool, error)
	Directory string         // the ACME directory URL
	Email     string         // the ACME account's contact; empty: none
	Roots     *x509.CertPool // trusted for the directory's HTTPS; nil: the system's
	// Key (32 bytes, derived from LINKQR_SECRET_KEY) seals what is cached:
	// private keys are secrets.
	Key []byte
	Log *slog.Logger
}

// Outcomes of the certificates metric.
const (
	outcomeObtained = "obtained" // a certificate issued (or renewed) by the CA to this instance
	outcomeFailed   = "failed"   // a handshake for an allowed name that got no certificate
	outcomeRefused  = "refused"  // a handshake for a name that is no verified domain
)

// Manager serves certificates for verified domains.
type Manager struct {
	acm     *autocert.Manager
	allowed func(ctx context.Context, host string) (bool, error)
	log     *slog.Logger
	// cache notes each order's start, end and failure beside the
	// certificates (Cache.Status reads them); reasons keeps the CA's words.
	cache   *Cache
	reasons *caReasons
	// servable holds the hosts last found allowed. If the database cannot
	// answer, they keep being served (from memory) through the outage,
	// the way the redirect keeps serving cached codes.
	servable sync.Map // host → struct{}
	// Certificates counts by outcome (obtained, failed, refused).
	Certificates *prometheus.CounterVec
}

// New returns a Manager. Nothing is contacted until the first handshake.
func New(o Options) (*Manager, error) {
	cache, err := NewCache(o.DB, o.Directory, o.Key, o.Log)
	if err != nil {
		return nil, err
	}
	m := &Manager{allowed: o.Allowed, log: o.Log, cache: cache}
	m.Certificates = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "linkqr_tls_certificates_total",
		Help: "On-demand TLS: certificates this instance obtained from the ACME CA (issued or renewed); handshakes for a verified domain that got no certificate (failed); handshakes for any other name (refused).",
	}, []string{"outcome"})
	for _, o := range []string{outcomeObtained, outcomeFailed, outcomeRefused} {
		m.Certificates.WithLabelValues(o)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	if o.Roots != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: o.Roots, MinVersion: tls.VersionTLS12}
	}
	m.reasons = &caReasons{next: t}
	client := &acme.Client{DirectoryURL: o.Directory, UserAgent: "linkqr", HTTPClient: &http.Client{Transport: m.reasons}}
	cache.onPut = func(name string) {
		if _, ok := certificateHost(name); ok {
			m.Certificates.WithLabelValues(outcomeObtained).Inc()
			m.log.Info("tls certificate obtained", "host", name)
		}
	}
	m.acm = &autocert.Manager{
		Prompt:     autocert.AcceptTOS,
		Cache:      cache,
		HostPolicy: m.hostPolicy,
		Client:     client,
		Email:      o.Email,
	}
	return m, nil
}

// TLSConfig is the TLS listener's configuration: certificates on demand,
// HTTP/2, and the TLS-ALPN-01 challenge protocol.
func (m *Manager) TLSConfig() *tls.Config {
	c := m.acm.TLSConfig()
	c.GetCertificate = m.getCertificate
	c.MinVersion = tls.VersionTLS12
	return c
}

// HTTPHandler answers the CA's HTTP-01 challenges under
// /.well-known/acme-challenge/ before next sees the request: it must wrap
// the outermost handler of the plain listener, whatever host it is for.
func (m *Manager) HTTPHandler(next http.Handler) http.Handler {
	return m.acm.HTTPHandler(next)
}

// errNotServable is what a handshake for a name that is no verified domain
// ends with.
var errNotServable = errors.New("certs: not a verified domain")

// getCertificate gates every handshake on the host being servable; the
// CA's TLS-ALPN-01 validation (answered from a token, never by ordering)
// is let through.
func (m *Manager) getCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if len(hello.SupportedProtos) == 1 && hello.SupportedProtos[0] == acme.ALPNProto {
		return m.acm.GetCertificate(hello)
	}
	if err := m.policy(hello.Context(), hello.ServerName); err != nil {
		if errors.Is(err, errNotServable) {
			m.Certificates.WithLabelValues(outcomeRefused).Inc()
		} else {
			m.Certificates.WithLabelValues(outcomeFailed).Inc()
		}
		return nil, err
	}
	cert, err := m.acm.GetCertificate(hello)
	if err != nil {
		m.Certificates.WithLabelValues(outcomeFailed).Inc()
		m.log.Warn("no tls certificate for a verified domain", "host", hello.ServerName, "err", err)
		if name, ok := normalize(hello.ServerName); ok && !memoized(err) {
			// The handshake's own deadline may have passed: the note is
			// for the domain's page, whatever became of the visitor.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(hello.Context()), 5*time.Second)
			m.cache.failed(ctx, name, m.reasons.reason(name, err))
			cancel()
		}
	}
	return cert, err
}

// hostPolicy is autocert's HostPolicy, asked before it looks up or orders
// a certificate and for every HTTP-01 challenge request. In a handshake
// getCertificate has just asked the database, so a host it found servable
// is not asked about twice.
func (m *Manager) hostPolicy(ctx context.Context, host string) error {
	if name, ok := normalize(host); ok {
		if _, known := m.servable.Load(name); known {
			return nil
		}
	}
	return m.policy(ctx, host)
}

// policy is nil for a servable host, asking the database.
func (m *Manager) policy(ctx context.Context, host string) error {
	name, ok := normalize(host)
	if !ok {
		return errNotServable
	}
	ok, err := m.allowed(ctx, name)
	if err != nil {
		if _, known := m.servable.Load(name); known {
			return nil
		}
		return fmt.Errorf("certs: is %s a verified domain: %w", name, err)
	}
	if !ok {
		m.servable.Delete(name)
		return errNotServable
	}
	m.servable.Store(name, struct{}{})
	return nil
}

// normalize is host as the cache and the domains table spell it: without
// a port (an HTTP-01 request's Host may carry one) or a final dot, in
// lower case, IDNs as punycode.
func normalize(host string) (string, bool) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	name, err := hostname.Parse(host) // the domains' own canonical form
	return name.String(), err == nil
}
