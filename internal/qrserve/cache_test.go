package qrserve

import (
	"bytes"
	"strconv"
	"testing"
)

func blob(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }

// TestCacheByteBound: the budget is bytes, the least recently used entry
// goes first, and a hit refreshes an entry.
func TestCacheByteBound(t *testing.T) {
	const val = 1000
	cost := int64(val + 1 + entryOverhead) // one-byte keys
	c := newCache(3 * cost)
	c.maxEntry = cost // the default maxBytes/8 would refuse these entries
	c.add("a", blob(val, 'a'))
	c.add("b", blob(val, 'b'))
	c.add("c", blob(val, 'c'))
	if n, b := c.size(); n != 3 || b != 3*cost {
		t.Fatalf("size %d entries, %d bytes; want 3, %d", n, b, 3*cost)
	}
	if _, ok := c.get("a"); !ok { // a is now the most recent
		t.Fatal("a missing")
	}
	c.add("d", blob(val, 'd'))
	if _, ok := c.get("b"); ok {
		t.Fatal("b, the least recently used, was not evicted")
	}
	for _, k := range []string{"a", "c", "d"} {
		if v, ok := c.get(k); !ok || v[0] != k[0] {
			t.Fatalf("%s: %v %q", k, ok, v[:1])
		}
	}
	if _, b := c.size(); b > c.maxBytes {
		t.Fatalf("%d bytes held, budget %d", b, c.maxBytes)
	}
}

// TestCacheManyLargeEntries: whatever is added, the total stays within the
// budget; entries are charged by size, not counted.
func TestCacheManyLargeEntries(t *testing.T) {
	c := newCache(1 << 20)
	for i := range 200 {
		c.add("k"+strconv.Itoa(i), blob(100_000+i, 'x')) // like 4096 px PNGs
	}
	n, b := c.size()
	if b > 1<<20 || n > 10 || n == 0 {
		t.Fatalf("%d entries, %d bytes for a 1 MiB budget", n, b)
	}
	if _, ok := c.get("k199"); !ok {
		t.Fatal("the newest entry was evicted")
	}
}

func TestCacheHitIsTheSameBytes(t *testing.T) {
	c := newCache(1 << 20)
	v := []byte("<svg/>")
	c.add("k", v)
	got, ok := c.get("k")
	if !ok || !bytes.Equal(got, v) || &got[0] != &v[0] {
		t.Fatalf("hit: %v %q (copied: %v)", ok, got, ok && &got[0] != &v[0])
	}
}

func TestCacheRefusesOversizeAndReplaces(t *testing.T) {
	c := newCache(8 << 10)
	c.add("big", blob(2<<10, 'x')) // more than maxBytes/8: would evict too much
	if _, ok := c.get("big"); ok {
		t.Fatal("an entry over maxEntry was stored")
	}
	c.add("k", blob(100, 'a'))
	c.add("k", blob(200, 'b'))
	n, b := c.size()
	if v, _ := c.get("k"); n != 1 || b != int64(1+200+entryOverhead) || v[0] != 'b' {
		t.Fatalf("replace: %d entries, %d bytes, %q", n, b, v[:1])
	}
}
