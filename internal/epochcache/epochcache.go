// Package epochcache is the in-process cache behind the redirect's code
// lookups and API-key verification: a bounded map whose entries are dropped
// when the row behind them changes (locally after commit, on other
// instances through NOTIFY), with an epoch guard so a load that raced with
// an invalidation never stores the stale answer afterwards.
package epochcache

import "sync"

// Cache maps keys to values loaded from the database.
type Cache[K comparable, V any] struct {
	max int

	mu      sync.RWMutex
	entries map[K]V
	epoch   uint64
}

// New returns a cache of at most max entries; beyond it an arbitrary entry
// is evicted (it only costs a reload).
func New[K comparable, V any](max int) *Cache[K, V] {
	return &Cache[K, V]{max: max, entries: make(map[K]V)}
}

// Get returns the cached value of k.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.RLock()
	v, ok := c.entries[k]
	c.mu.RUnlock()
	return v, ok
}

// Epoch is read before loading a value; pass it to Put.
func (c *Cache[K, V]) Epoch() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.epoch
}

// Put stores v unless an invalidation happened since epoch was read, and
// reports whether it did.
func (c *Cache[K, V]) Put(k K, v V, epoch uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch != epoch {
		return false
	}
	if _, ok := c.entries[k]; !ok && len(c.entries) >= c.max {
		for victim := range c.entries {
			delete(c.entries, victim)
			break
		}
	}
	c.entries[k] = v
	return true
}

// Invalidate drops k and makes every load in flight unstorable.
func (c *Cache[K, V]) Invalidate(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	delete(c.entries, k)
}

// InvalidateWhere drops every entry that drop selects and, like
// Invalidate, makes every load in flight unstorable. It walks the whole
// cache: for rare changes that touch many keys at once.
func (c *Cache[K, V]) InvalidateWhere(drop func(K, V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	for k, v := range c.entries {
		if drop(k, v) {
			delete(c.entries, k)
		}
	}
}

// Reset drops everything (used when notifications may have been missed).
func (c *Cache[K, V]) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	clear(c.entries)
}

// Keys returns the cached keys, in no order.
func (c *Cache[K, V]) Keys() []K {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]K, 0, len(c.entries))
	for k := range c.entries {
		out = append(out, k)
	}
	return out
}

// Len is the number of cached entries.
func (c *Cache[K, V]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
