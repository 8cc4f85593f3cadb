package apikey

import "testing"

// A cached key is recognised only by its own token: another secret under
// the same public id must miss the cache (and pay argon2id, and fail).
func TestCacheNeedsTheVerifiedToken(t *testing.T) {
	t.Parallel()
	c := newCache([]byte("k"))
	good := "lqk_AAAAAAAAAAAA_" + "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
	bad := "lqk_AAAAAAAAAAAA_" + "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"
	c.put(&entry{key: Key{PublicID: "AAAAAAAAAAAA"}, digest: c.digest(good)}, c.currentEpoch())
	if c.get("AAAAAAAAAAAA", c.digest(good)) == nil {
		t.Fatal("the verified token missed the cache")
	}
	if c.get("AAAAAAAAAAAA", c.digest(bad)) != nil {
		t.Fatal("a different secret under the same public id hit the cache")
	}
	epoch := c.currentEpoch()
	c.invalidate("AAAAAAAAAAAA")
	if c.get("AAAAAAAAAAAA", c.digest(good)) != nil {
		t.Fatal("a revoked key is still cached")
	}
	c.put(&entry{key: Key{PublicID: "AAAAAAAAAAAA"}, digest: c.digest(good)}, epoch)
	if c.get("AAAAAAAAAAAA", c.digest(good)) != nil {
		t.Fatal("a verification that raced with the revocation was cached")
	}
}
