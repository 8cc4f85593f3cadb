package certs

import (
	"context"
	"errors"
	"log/slog"

	"golang.org/x/crypto/acme/autocert"

	"github.com/linkqr/linkqr/internal/certs/internal/certsdb"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/sealbox"
	"github.com/linkqr/linkqr/internal/store"
)

// Cache is autocert's Cache in PostgreSQL (table acme_cache), so every
// instance shares the ACME account, the certificates and the challenge
// tokens: one instance's issuance serves all, and a validation the CA
// sends to any instance is answered. Every value holds or may hold a
// private key, so every value is sealed.
type Cache struct {
	db     *store.DB
	issuer string // the ACME directory URL: entries of another CA are not ours
	box    *sealbox.Box
	log    *slog.Logger
	onPut  func(name string)
}

// NewCache returns the cache of the ACME directory's entries, sealed under
// key (32 bytes).
func NewCache(db *store.DB, directory string, key []byte, log *slog.Logger) (*Cache, error) {
	box, err := sealbox.New(key)
	if err != nil {
		return nil, err
	}
	return &Cache{db: db, issuer: directory, box: box, log: log}, nil
}

// ad binds a sealed value to its row.
func (c *Cache) ad(name string) []byte { return []byte(c.issuer + "\x00" + name) }

// Get returns the value under name, or autocert.ErrCacheMiss. A value that
// no longer decrypts (LINKQR_SECRET_KEY changed) is a miss too: the
// certificate or account is then obtained again and overwrites it, rather
// than every handshake failing.
func (c *Cache) Get(ctx context.Context, name string) ([]byte, error) {
	plain, err := c.get(ctx, name)
	if errors.Is(err, autocert.ErrCacheMiss) {
		if host, ok := certificateHost(name); ok {
			// autocert asks the cache after the memory, and orders a
			// certificate when both miss: the order begins now.
			c.obtaining(ctx, host)
		}
	}
	return plain, err
}

// get is Get without noting an order.
func (c *Cache) get(ctx context.Context, name string) ([]byte, error) {
	sealed, err := certsdb.New().ACMECacheGet(ctx, c.db.Conn(ctx), certsdb.ACMECacheGetParams{Issuer: c.issuer, Name: name})
	if err = store.InterpretError(err); errors.Is(err, id.ErrNotFound) {
		return nil, autocert.ErrCacheMiss
	} else if err != nil {
		return nil, err
	}
	plain, err := c.box.Open(c.ad(name), sealed)
	if err != nil {
		c.log.Warn("acme cache entry does not decrypt (LINKQR_SECRET_KEY changed?); obtaining it again", "name", name)
		return nil, autocert.ErrCacheMiss
	}
	return plain, nil
}

// Put stores value under name, replacing what was there.
func (c *Cache) Put(ctx context.Context, name string, value []byte) error {
	err := certsdb.New().ACMECachePut(ctx, c.db.Conn(ctx), certsdb.ACMECachePutParams{
		Issuer: c.issuer, Name: name, ValueEnc: c.box.Seal(c.ad(name), value),
	})
	if err != nil {
		return err
	}
	if host, ok := certificateHost(name); ok {
		c.obtained(ctx, host)
	}
	if c.onPut != nil {
		c.onPut(name)
	}
	return nil
}

// Delete removes name; removing what is not there is no error.
func (c *Cache) Delete(ctx context.Context, name string) error {
	return certsdb.New().ACMECacheDelete(ctx, c.db.Conn(ctx), certsdb.ACMECacheDeleteParams{Issuer: c.issuer, Name: name})
}
