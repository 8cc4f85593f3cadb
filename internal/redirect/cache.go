package redirect

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/linkqr/linkqr/internal/epochcache"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/store"
)

// maxCached bounds the code cache (a miss costs one indexed query).
const maxCached = 200000

// Resolver finds what a code redirects to; link.Service is the real one.
type Resolver interface {
	Resolve(ctx context.Context, code link.Code) (link.Target, error)
}

// gone reports whether the link no longer redirects (410).
func gone(t *link.Target, now time.Time) bool {
	return t.Deleted || t.Status != link.StatusActive || (t.ExpiresAt != nil && !now.Before(*t.ExpiresAt))
}

// cache maps codes to targets; unknown codes are not cached, so a link
// created on any instance is seen at once.
type cache struct {
	resolver Resolver
	group    singleflight.Group
	entries  *epochcache.Cache[link.Code, *link.Target]
}

func newCache(r Resolver) *cache {
	return &cache{resolver: r, entries: epochcache.New[link.Code, *link.Target](maxCached)}
}

// lookup returns the code's target, nil for an unknown code.
func (c *cache) lookup(ctx context.Context, code link.Code) (*link.Target, error) {
	if t, ok := c.entries.Get(code); ok {
		return t, nil
	}
	v, err, _ := c.group.Do(code.String(), func() (any, error) {
		epoch := c.entries.Epoch()
		t, err := c.resolver.Resolve(ctx, code)
		if errors.Is(err, store.ErrNotFound) {
			return (*link.Target)(nil), nil
		}
		if err != nil {
			return nil, err
		}
		c.entries.Put(code, &t, epoch)
		return &t, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*link.Target), nil
}

// invalidate drops a code; a string that is no code was never cached.
func (c *cache) invalidate(code string) {
	if k, ok := link.ParseCodeShape(code); ok {
		c.entries.Invalidate(k)
	}
}

func (c *cache) reset() { c.entries.Reset() }
