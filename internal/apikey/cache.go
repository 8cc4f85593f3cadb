package apikey

import (
	"crypto/hmac"
	"crypto/sha256"
	"sync"
	"sync/atomic"
)

// maxCached bounds the verified-token cache; beyond it an arbitrary entry
// is evicted (it costs one argon2id verification to come back).
const maxCached = 50000

// cache maps HMAC-SHA256(token) to the verified key. Only tokens that
// passed argon2id are ever inserted, so a hit is proof of a good token.
type cache struct {
	hmacKey []byte

	mu       sync.RWMutex
	byDigest map[[32]byte]*entry
	byPublic map[string][32]byte
	// epoch increases on every invalidation, so a verification that raced
	// with a revocation does not insert a stale entry afterwards.
	epoch uint64
}

type entry struct {
	key       Key
	lastTouch atomic.Int64 // unix nanoseconds of the last last_used_at write
}

func newCache(hmacKey []byte) *cache {
	return &cache{hmacKey: hmacKey, byDigest: map[[32]byte]*entry{}, byPublic: map[string][32]byte{}}
}

func (c *cache) digest(token string) [32]byte {
	m := hmac.New(sha256.New, c.hmacKey)
	m.Write([]byte(token))
	var d [32]byte
	copy(d[:], m.Sum(nil))
	return d
}

func (c *cache) get(d [32]byte) *entry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.byDigest[d]
}

func (c *cache) currentEpoch() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.epoch
}

// put inserts e unless an invalidation happened since epoch was read.
func (c *cache) put(d [32]byte, e *entry, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch != epoch {
		return
	}
	if len(c.byDigest) >= maxCached {
		for victim, ve := range c.byDigest {
			delete(c.byDigest, victim)
			delete(c.byPublic, ve.key.PublicID)
			break
		}
	}
	c.byDigest[d] = e
	c.byPublic[e.key.PublicID] = d
}

// invalidate drops the key with this public id.
func (c *cache) invalidate(publicID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	if d, ok := c.byPublic[publicID]; ok {
		delete(c.byDigest, d)
		delete(c.byPublic, publicID)
	}
}

// reset drops everything (notifications may have been missed).
func (c *cache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	clear(c.byDigest)
	clear(c.byPublic)
}
