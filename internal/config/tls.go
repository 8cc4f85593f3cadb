package config

import (
	"crypto/x509"
	"net/mail"
	"net/url"
	"os"
)

// DefaultACMEDirectory is Let's Encrypt's production directory, where
// certificates for custom domains come from unless LINKQR_ACME_DIRECTORY
// says otherwise.
const DefaultACMEDirectory = "https://acme-v02.api.letsencrypt.org/directory"

// TLS is on-demand TLS for verified custom domains. The zero value (no
// LINKQR_TLS_ADDR) runs no TLS listener: TLS is then a proxy's business.
type TLS struct {
	Addr      string // LINKQR_TLS_ADDR: host:port of the HTTPS listener
	Directory string // LINKQR_ACME_DIRECTORY: the ACME directory URL
	Email     string // LINKQR_ACME_EMAIL: the ACME account's contact; empty: none
	// CARoots (LINKQR_ACME_CA_ROOTS) are the only roots trusted for the
	// ACME directory's own HTTPS, for a CA whose server certificate no
	// public root signs (a test CA); nil: the system's roots.
	CARoots *x509.CertPool
}

// Enabled reports whether a TLS listener runs.
func (t TLS) Enabled() bool { return t.Addr != "" }

// loadTLS reads the LINKQR_TLS_ADDR and LINKQR_ACME_* variables; addr and
// metricsAddr are the listeners it must not collide with.
func loadTLS(getenv func(string) string, addr, metricsAddr string) (TLS, error) {
	t := TLS{Addr: getenv("LINKQR_TLS_ADDR"), Directory: DefaultACMEDirectory}
	if t.Addr != "" {
		if err := checkAddr(t.Addr); err != nil {
			return TLS{}, &Error{"LINKQR_TLS_ADDR", t.Addr, err.Error() + ", e.g. :443"}
		}
		for _, other := range []struct{ name, addr string }{{"LINKQR_ADDR", addr}, {"LINKQR_METRICS_ADDR", metricsAddr}} {
			if other.addr != "" && sameListener(t.Addr, other.addr) {
				return TLS{}, &Error{"LINKQR_TLS_ADDR", t.Addr, "must differ from " + other.name + ": HTTPS gets a listener of its own"}
			}
		}
	}
	// The ACME variables mean nothing without the listener: set alone, they
	// are a mistake worth a refusal rather than a silent no-op.
	needsAddr := func(name, value string) error {
		if t.Addr == "" {
			return &Error{name, value, "needs LINKQR_TLS_ADDR: certificates are obtained only for the TLS listener"}
		}
		return nil
	}
	if v := getenv("LINKQR_ACME_DIRECTORY"); v != "" {
		if err := needsAddr("LINKQR_ACME_DIRECTORY", v); err != nil {
			return TLS{}, err
		}
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" {
			return TLS{}, &Error{"LINKQR_ACME_DIRECTORY", v, "must be the https:// URL of an ACME directory, e.g. " + DefaultACMEDirectory}
		}
		t.Directory = v
	}
	if v := getenv("LINKQR_ACME_EMAIL"); v != "" {
		if err := needsAddr("LINKQR_ACME_EMAIL", v); err != nil {
			return TLS{}, err
		}
		a, err := mail.ParseAddress(v)
		if err != nil || a.Address != v {
			return TLS{}, &Error{"LINKQR_ACME_EMAIL", v, "must be a plain e-mail address, e.g. ops@example.com"}
		}
		t.Email = v
	}
	if v := getenv("LINKQR_ACME_CA_ROOTS"); v != "" {
		if err := needsAddr("LINKQR_ACME_CA_ROOTS", v); err != nil {
			return TLS{}, err
		}
		pem, err := os.ReadFile(v)
		if err != nil {
			return TLS{}, &Error{"LINKQR_ACME_CA_ROOTS", v, "cannot be read: " + err.Error()}
		}
		t.CARoots = x509.NewCertPool()
		if !t.CARoots.AppendCertsFromPEM(pem) {
			return TLS{}, &Error{"LINKQR_ACME_CA_ROOTS", v, "holds no PEM certificate (-----BEGIN CERTIFICATE-----)"}
		}
	}
	return t, nil
}
