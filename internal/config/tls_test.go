package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSignedPEM is a fresh self-signed certificate in PEM, for
// LINKQR_ACME_CA_ROOTS.
func selfSignedPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test root"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestLoadTLS(t *testing.T) {
	t.Parallel()
	c, err := Load(env(), false)
	if err != nil || c.TLS.Enabled() || c.TLS.Addr != "" {
		t.Fatalf("default: %+v %v; want no TLS listener", c.TLS, err)
	}
	c, err = Load(env("LINKQR_TLS_ADDR", ":8443"), false)
	if err != nil || !c.TLS.Enabled() || c.TLS.Directory != DefaultACMEDirectory || c.TLS.Email != "" || c.TLS.CARoots != nil {
		t.Fatalf("TLS with defaults: %+v %v", c.TLS, err)
	}
	roots := filepath.Join(t.TempDir(), "roots.pem")
	if err := os.WriteFile(roots, selfSignedPEM(t), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = Load(env(
		"LINKQR_TLS_ADDR", "0.0.0.0:443",
		"LINKQR_ADDR", "0.0.0.0:80",
		"LINKQR_ACME_DIRECTORY", "https://127.0.0.1:14000/dir",
		"LINKQR_ACME_EMAIL", "ops@example.com",
		"LINKQR_ACME_CA_ROOTS", roots,
	), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.TLS.Addr != "0.0.0.0:443" || c.TLS.Directory != "https://127.0.0.1:14000/dir" || c.TLS.Email != "ops@example.com" || c.TLS.CARoots == nil {
		t.Errorf("values: %+v", c.TLS)
	}
}

func TestLoadTLSErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		env    []string
		bad    string // the variable the error names
		reason string // part of the error
	}{
		{[]string{"LINKQR_TLS_ADDR", "443"}, "LINKQR_TLS_ADDR", "host:port"},
		{[]string{"LINKQR_TLS_ADDR", "127.0.0.1:8080"}, "LINKQR_TLS_ADDR", "must differ from LINKQR_ADDR"},
		{[]string{"LINKQR_TLS_ADDR", ":9090"}, "LINKQR_TLS_ADDR", "must differ from LINKQR_METRICS_ADDR"},
		{[]string{"LINKQR_ACME_DIRECTORY", "https://ca.example/dir"}, "LINKQR_ACME_DIRECTORY", "needs LINKQR_TLS_ADDR"},
		{[]string{"LINKQR_TLS_ADDR", ":8443", "LINKQR_ACME_DIRECTORY", "http://ca.example/dir"}, "LINKQR_ACME_DIRECTORY", "https:// URL"},
		{[]string{"LINKQR_TLS_ADDR", ":8443", "LINKQR_ACME_DIRECTORY", "ca.example/dir"}, "LINKQR_ACME_DIRECTORY", "https:// URL"},
		{[]string{"LINKQR_ACME_EMAIL", "ops@example.com"}, "LINKQR_ACME_EMAIL", "needs LINKQR_TLS_ADDR"},
		{[]string{"LINKQR_TLS_ADDR", ":8443", "LINKQR_ACME_EMAIL", "Ops <ops@example.com>"}, "LINKQR_ACME_EMAIL", "plain e-mail address"},
		{[]string{"LINKQR_TLS_ADDR", ":8443", "LINKQR_ACME_EMAIL", "ops"}, "LINKQR_ACME_EMAIL", "plain e-mail address"},
		{[]string{"LINKQR_ACME_CA_ROOTS", notPEM}, "LINKQR_ACME_CA_ROOTS", "needs LINKQR_TLS_ADDR"},
		{[]string{"LINKQR_TLS_ADDR", ":8443", "LINKQR_ACME_CA_ROOTS", filepath.Join(dir, "missing.pem")}, "LINKQR_ACME_CA_ROOTS", "cannot be read"},
		{[]string{"LINKQR_TLS_ADDR", ":8443", "LINKQR_ACME_CA_ROOTS", notPEM}, "LINKQR_ACME_CA_ROOTS", "holds no PEM certificate"},
	}
	for _, tc := range cases {
		_, err := Load(env(tc.env...), false)
		if err == nil {
			t.Errorf("%v: no error", tc.env)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, tc.bad+"=") || !strings.Contains(msg, tc.reason) || strings.Contains(msg, "\n") {
			t.Errorf("%v: error %q must be one line naming %s and saying %q", tc.env, msg, tc.bad, tc.reason)
		}
	}
}
