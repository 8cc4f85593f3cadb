package certs_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/certs"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

// entry is a cache entry as autocert writes one: the private key's PEM
// block, then the certificate's, valid until notAfter.
func entry(t *testing.T, host string, notAfter time.Time) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Test Issuing CA"},
		NotBefore: notAfter.Add(-90 * 24 * time.Hour), NotAfter: notAfter, DNSNames: []string{host},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	_ = pem.Encode(&b, &pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	return b.Bytes()
}

// TestStatus: what every instance can tell of a name's certificate from
// PostgreSQL: none; being obtained from the moment autocert misses the
// cache (stale after an order's time); failed with the reason; valid
// until its end once stored (which ends the order's row), then expired.
// Nothing but the certificate's own name counts.
func TestStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := store.NewDB(testkit.DB(t))
	c := newCache(t, db, "https://ca.example/dir", 1)
	now := time.Now().UTC().Truncate(time.Second)
	status := func(at time.Time) certs.Status {
		t.Helper()
		st, err := c.Status(ctx, "go.acme.com", at)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := status(now); st.State != certs.StateNone {
		t.Fatalf("nothing stored: %+v", st)
	}
	for _, name := range []string{"acme_account+key", "go.acme.com+token", "tok+http-01"} {
		_, _ = c.Get(ctx, name)
	}
	if st := status(now); st.State != certs.StateNone {
		t.Fatalf("misses of other names: %+v", st)
	}
	if _, err := c.Get(ctx, "go.acme.com"); err == nil {
		t.Fatal("a certificate in an empty cache")
	}
	st := status(time.Now())
	if st.State != certs.StateObtaining || st.At.Before(now) {
		t.Errorf("after autocert missed the cache: %+v", st)
	}
	if st := status(time.Now().Add(6 * time.Minute)); st.State != certs.StateNone {
		t.Errorf("an order older than autocert gives one: %+v", st)
	}
	c.Failed(ctx, "go.acme.com", "the CA could not validate go.acme.com (http-01: Connection refused)")
	if st := status(time.Now()); st.State != certs.StateFailed || st.Reason != "the CA could not validate go.acme.com (http-01: Connection refused)" || st.At.Before(now) {
		t.Errorf("after a failure: %+v", st)
	}
	c.Failed(ctx, "go.acme.com", strings.Repeat("é", 600))
	if st := status(time.Now()); len(st.Reason) > 905 || !strings.HasSuffix(st.Reason, "é…") {
		t.Errorf("a long reason is kept whole: %d bytes, ends %q", len(st.Reason), st.Reason[len(st.Reason)-8:])
	}

	notAfter := now.Add(60 * 24 * time.Hour)
	if err := c.Put(ctx, "go.acme.com", entry(t, "go.acme.com", notAfter)); err != nil {
		t.Fatal(err)
	}
	if st := status(now); st.State != certs.StateValid || !st.NotAfter.Equal(notAfter) || st.Issuer != "Test Issuing CA" {
		t.Errorf("stored: %+v", st)
	}
	if st := status(notAfter.Add(time.Second)); st.State != certs.StateExpired || !st.NotAfter.Equal(notAfter) {
		t.Errorf("after its end: %+v (the order's row must be gone with the certificate's arrival)", st)
	}
	other := newCache(t, db, "https://staging.example/dir", 1)
	if st, err := other.Status(ctx, "go.acme.com", now); err != nil || st.State != certs.StateNone {
		t.Errorf("another CA's view: %+v %v", st, err)
	}
}
