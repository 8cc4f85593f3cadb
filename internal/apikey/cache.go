package apikey

import (
	"crypto/hmac"
	"crypto/sha256"
	"sync/atomic"

	"github.com/linkqr/linkqr/internal/epochcache"
)

// maxCached bounds the verified-token cache; beyond it an arbitrary entry
// is evicted (it costs one argon2id verification to come back).
const maxCached = 50000

// cache maps a key's public id to the token verified for it, recognised by
// HMAC-SHA256(token). Only tokens that passed argon2id are ever inserted, so
// a hit whose digest matches is proof of a good token; keying by public id
// lets a revocation drop the entry by the id it is published under.
type cache struct {
	hmacKey []byte
	entries *epochcache.Cache[string, *entry]
}

type entry struct {
	key       Key
	digest    [32]byte
	lastTouch atomic.Int64 // unix nanoseconds of the last last_used_at write
}

func newCache(hmacKey []byte) *cache {
	return &cache{hmacKey: hmacKey, entries: epochcache.New[string, *entry](maxCached)}
}

func (c *cache) digest(token string) [32]byte {
	m := hmac.New(sha256.New, c.hmacKey)
	m.Write([]byte(token))
	var d [32]byte
	copy(d[:], m.Sum(nil))
	return d
}

// get returns the entry of publicID when d is its verified token's digest;
// the digests are compared in constant time.
func (c *cache) get(publicID string, d [32]byte) *entry {
	e, ok := c.entries.Get(publicID)
	if !ok || !hmac.Equal(e.digest[:], d[:]) {
		return nil
	}
	return e
}

func (c *cache) currentEpoch() uint64 { return c.entries.Epoch() }

// put inserts e unless a revocation happened since epoch was read.
func (c *cache) put(e *entry, epoch uint64) { c.entries.Put(e.key.PublicID, e, epoch) }

// invalidate drops the key with this public id.
func (c *cache) invalidate(publicID string) { c.entries.Invalidate(publicID) }

// reset drops everything (notifications may have been missed).
func (c *cache) reset() { c.entries.Reset() }
