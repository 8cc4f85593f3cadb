package qrserve

import (
	"container/list"
	"sync"
)

// entryOverhead approximates what an entry costs beyond its key and image
// bytes (list element, map slot, slice headers), so that many tiny SVGs
// cannot exceed the budget through bookkeeping alone.
const entryOverhead = 128

// cache is a least-recently-used map from ETag to rendered bytes, bounded
// by the total bytes it holds rather than by entries: a 4096 px PNG and a
// 2 KB SVG are charged what they weigh. The cached slices are shared with
// every caller and must never be modified.
type cache struct {
	mu       sync.Mutex
	maxBytes int64
	maxEntry int64 // larger images are not kept: one must not evict dozens
	bytes    int64
	order    *list.List // front = most recently used; values are *entry
	byKey    map[string]*list.Element
}

type entry struct {
	key string
	val []byte
}

func (e *entry) cost() int64 { return int64(len(e.key)+len(e.val)) + entryOverhead }

func newCache(maxBytes int64) *cache {
	return &cache{
		maxBytes: maxBytes,
		maxEntry: maxBytes / 8,
		order:    list.New(),
		byKey:    map[string]*list.Element{},
	}
}

// get returns the bytes stored under key and marks them recently used.
func (c *cache) get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry).val, true
}

// add stores val under key, evicting least recently used entries until the
// total fits maxBytes. A value costing more than maxEntry is not stored.
func (c *cache) add(key string, val []byte) {
	e := &entry{key: key, val: val}
	if e.cost() > c.maxEntry {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.bytes -= el.Value.(*entry).cost()
		el.Value = e
		c.order.MoveToFront(el)
	} else {
		c.byKey[key] = c.order.PushFront(e)
	}
	c.bytes += e.cost()
	for c.bytes > c.maxBytes {
		oldest := c.order.Back()
		old := oldest.Value.(*entry)
		c.order.Remove(oldest)
		delete(c.byKey, old.key)
		c.bytes -= old.cost()
	}
}

// size reports the entries and bytes held, for tests and metrics.
func (c *cache) size() (entries int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.bytes
}
