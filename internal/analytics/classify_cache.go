package analytics

import (
	"hash/maphash"
	"sync"
)

const cacheShards = 16

// clientCache is a bounded, concurrency-safe memo of classify results keyed
// by normalised User-Agent. Each shard keeps two generations of at most
// perShard entries: a hit in the older generation is promoted, and when the
// current one fills up the older one is dropped whole. That approximates LRU
// (what is in use survives, what is not ages out) at the cost of a map
// lookup, and bounds memory to 2 × capacity entries of ≤ MaxUserAgentLen
// bytes each (about 5 MiB at the default capacity), whatever clients send.
type clientCache struct {
	seed     maphash.Seed
	perShard int
	shards   [cacheShards]cacheShard
}

type cacheShard struct {
	mu        sync.Mutex
	cur, prev map[string]Client
	_         [40]byte // keep shards on separate cache lines
}

// newClientCache makes a cache that holds at least capacity entries.
func newClientCache(capacity int) *clientCache {
	per := max(1, (capacity+cacheShards-1)/cacheShards)
	c := &clientCache{seed: maphash.MakeSeed(), perShard: per}
	for i := range c.shards {
		c.shards[i].cur = make(map[string]Client, per)
	}
	return c
}

func (c *clientCache) shard(key string) *cacheShard {
	return &c.shards[maphash.String(c.seed, key)%cacheShards]
}

func (c *clientCache) get(key string) (Client, bool) {
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.cur[key]; ok {
		return v, true
	}
	if v, ok := s.prev[key]; ok {
		s.putLocked(c.perShard, key, v)
		return v, true
	}
	return Client{}, false
}

// put stores v under key; key must not alias a larger buffer.
func (c *clientCache) put(key string, v Client) {
	s := c.shard(key)
	s.mu.Lock()
	s.putLocked(c.perShard, key, v)
	s.mu.Unlock()
}

func (s *cacheShard) putLocked(perShard int, key string, v Client) {
	if _, ok := s.cur[key]; !ok && len(s.cur) >= perShard {
		s.prev, s.cur = s.cur, make(map[string]Client, perShard)
	}
	s.cur[key] = v
}

// len counts the entries held, for tests.
func (c *clientCache) len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += len(s.cur) + len(s.prev)
		s.mu.Unlock()
	}
	return n
}
