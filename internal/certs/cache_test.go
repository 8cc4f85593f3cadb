package certs_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"

	"golang.org/x/crypto/acme/autocert"

	"github.com/linkqr/linkqr/internal/certs"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func newCache(t *testing.T, db *store.DB, issuer string, key byte) *certs.Cache {
	t.Helper()
	c, err := certs.NewCache(db, issuer, bytes.Repeat([]byte{key}, 32), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCacheSealedAndShared: what one instance puts another reads; at rest
// it is ciphertext; another CA's entries, or entries sealed under another
// LINKQR_SECRET_KEY, are misses (obtained again), never errors.
func TestCacheSealedAndShared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := store.NewDB(testkit.DB(t))
	const ca = "https://ca.example/dir"
	pemKey := []byte("-----BEGIN EC PRIVATE KEY-----\nsecret\n-----END EC PRIVATE KEY-----\n")
	one, two := newCache(t, db, ca, 1), newCache(t, db, ca, 1)
	if _, err := one.Get(ctx, "go.acme.com"); !errors.Is(err, autocert.ErrCacheMiss) {
		t.Fatalf("empty cache: %v", err)
	}
	if err := one.Put(ctx, "go.acme.com", pemKey); err != nil {
		t.Fatal(err)
	}
	if got, err := two.Get(ctx, "go.acme.com"); err != nil || !bytes.Equal(got, pemKey) {
		t.Fatalf("another instance reads %q %v", got, err)
	}
	var atRest []byte
	if err := db.Pool().QueryRow(ctx, `SELECT value_enc FROM acme_cache WHERE issuer = $1 AND name = 'go.acme.com'`, ca).Scan(&atRest); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(atRest, []byte("PRIVATE KEY")) || bytes.Contains(atRest, []byte("secret")) {
		t.Errorf("the private key is stored in the clear: %q", atRest)
	}

	renewed := []byte("renewed")
	if err := two.Put(ctx, "go.acme.com", renewed); err != nil {
		t.Fatal(err)
	}
	if got, err := one.Get(ctx, "go.acme.com"); err != nil || !bytes.Equal(got, renewed) {
		t.Errorf("after a renewal: %q %v", got, err)
	}
	for name, c := range map[string]*certs.Cache{
		"another CA":         newCache(t, db, "https://staging.example/dir", 1),
		"another secret key": newCache(t, db, ca, 2),
	} {
		if got, err := c.Get(ctx, "go.acme.com"); !errors.Is(err, autocert.ErrCacheMiss) {
			t.Errorf("%s: %q %v, want a miss", name, got, err)
		}
	}
	if _, err := db.Pool().Exec(ctx, `UPDATE acme_cache SET name = 'other.acme.com'`); err != nil {
		t.Fatal(err)
	}
	if _, err := one.Get(ctx, "other.acme.com"); !errors.Is(err, autocert.ErrCacheMiss) {
		t.Errorf("a value moved onto another name decrypts: %v", err)
	}
	if err := one.Delete(ctx, "other.acme.com"); err != nil {
		t.Fatal(err)
	}
	if err := one.Delete(ctx, "other.acme.com"); err != nil {
		t.Errorf("deleting what is gone: %v", err)
	}
	var left int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM acme_cache`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d rows left after Delete (%v)", left, err)
	}
}
