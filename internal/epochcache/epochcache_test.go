package epochcache

import "testing"

func TestPutAfterInvalidateIsRefused(t *testing.T) {
	t.Parallel()
	c := New[string, int](10)
	e := c.Epoch()
	c.Invalidate("a") // a change committed while "a" was being loaded
	if c.Put("a", 1, e) {
		t.Fatal("a stale load was stored")
	}
	if _, ok := c.Get("a"); ok {
		t.Fatal("stale entry visible")
	}
	if !c.Put("a", 2, c.Epoch()) {
		t.Fatal("a fresh load was refused")
	}
	if v, ok := c.Get("a"); !ok || v != 2 {
		t.Fatalf("got %d %v", v, ok)
	}
	c.Reset()
	if c.Len() != 0 {
		t.Fatalf("reset left %d entries", c.Len())
	}
}

func TestBounded(t *testing.T) {
	t.Parallel()
	c := New[int, int](3)
	for i := range 100 {
		c.Put(i, i, c.Epoch())
	}
	if c.Len() != 3 {
		t.Fatalf("len %d, want 3", c.Len())
	}
	if _, ok := c.Get(99); !ok {
		t.Fatal("the newest entry was evicted")
	}
	c.Put(99, 100, c.Epoch()) // replacing an entry evicts nothing
	if c.Len() != 3 {
		t.Fatalf("len %d after replace", c.Len())
	}
}

func TestInvalidateWhereDropsTheSelectedAndStalesLoads(t *testing.T) {
	c := New[string, int](10)
	for i, k := range []string{"a", "b", "c"} {
		c.Put(k, i, c.Epoch())
	}
	epoch := c.Epoch() // a load that began before the invalidation
	c.InvalidateWhere(func(_ string, v int) bool { return v != 1 })
	if _, ok := c.Get("a"); ok || c.Len() != 1 {
		t.Fatalf("after dropping the values other than 1: %d entries, a kept %v", c.Len(), ok)
	}
	if v, ok := c.Get("b"); !ok || v != 1 {
		t.Fatalf("b = %d, %v; want kept", v, ok)
	}
	if c.Put("a", 0, epoch) {
		t.Fatal("a load from before InvalidateWhere was stored")
	}
}
