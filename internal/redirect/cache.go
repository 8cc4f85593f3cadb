package redirect

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/singleflight"

	"github.com/linkqr/linkqr/internal/dbhealth"
	"github.com/linkqr/linkqr/internal/epochcache"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
)

// maxCached bounds the code cache (a miss costs one indexed query).
const maxCached = 200000

// LookupTimeout bounds one cache-miss lookup, so an uncached code is
// answered (503 with Retry-After, when the database does not answer in
// time) within a second, never left hanging. An indexed lookup takes well
// under a millisecond; half a second is slowness no visitor waits out.
const LookupTimeout = 500 * time.Millisecond

// ErrUnavailable means the code is not cached and the database is known
// to be unreachable, so it was not asked.
var ErrUnavailable = errors.New("redirect: the database is unreachable and the code is not cached")

// Resolver finds what a code on a domain redirects to; link.Service is
// the real one.
type Resolver interface {
	Resolve(ctx context.Context, k link.Key) (link.Target, error)
}

// gone reports whether the link no longer redirects (410).
func gone(t *link.Target, now time.Time) bool {
	return t.Deleted || t.Status != link.StatusActive || (t.ExpiresAt != nil && !now.Before(*t.ExpiresAt))
}

// cache maps codes (on their domains) to targets; unknown codes are not cached, so a link
// created on any instance is seen at once.
//
// Entries are trusted while the notification listener is connected, since
// every change reaches them as an invalidation. While it is not (suspend
// until the next reset), a change may be missed: a cached code is then
// looked up again on every request, and its cached target is served only
// when that lookup fails — during a database outage, the redirect keeps
// answering every code it knows. Once LISTEN is back the cache is reset, so
// nothing missed meanwhile outlives the disconnection.
type cache struct {
	resolver Resolver
	db       *dbhealth.Monitor
	group    singleflight.Group
	entries  *epochcache.Cache[link.Key, *link.Target]
	trusted  atomic.Bool
}

func newCache(r Resolver, db *dbhealth.Monitor) *cache {
	c := &cache{resolver: r, db: db, entries: epochcache.New[link.Key, *link.Target](maxCached)}
	c.trusted.Store(true) // empty: nothing to distrust until a disconnection
	return c
}

// lookup returns the code's target, nil for an unknown code.
func (c *cache) lookup(ctx context.Context, code link.Key) (*link.Target, error) {
	t, cached := c.entries.Get(code)
	if cached && c.trusted.Load() {
		return t, nil // the hot path: nothing else to ask
	}
	up := c.db.Up()
	switch {
	case cached && !up:
		return t, nil
	case !up:
		return nil, ErrUnavailable // known down: fail at once, not after a connect attempt
	}
	fresh, err := c.load(ctx, code)
	if err != nil {
		c.db.Observe(err)
		if cached {
			return t, nil // untrusted, but the best answer while the database fails
		}
		return nil, err
	}
	return fresh, nil
}

// load asks the resolver, once for all concurrent requests of a code and
// for at most LookupTimeout, whoever of them goes away.
func (c *cache) load(ctx context.Context, code link.Key) (*link.Target, error) {
	v, err, _ := c.group.Do(code.String(), func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), LookupTimeout)
		defer cancel()
		epoch := c.entries.Epoch()
		t, err := c.resolver.Resolve(ctx, code)
		if errors.Is(err, id.ErrNotFound) {
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

// invalidate drops a code named by its link.Key.String; a string that is
// no key was never cached.
func (c *cache) invalidate(key string) {
	if k, ok := link.ParseKey(key); ok {
		c.entries.Invalidate(k)
	}
}

// invalidateWorkspace drops every cached code of the workspace; their next
// lookup reads what the database says now.
func (c *cache) invalidateWorkspace(id uuid.UUID) {
	c.entries.InvalidateWhere(func(_ link.Key, t *link.Target) bool { return t != nil && t.WorkspaceID == id })
}

// suspend: notifications may be missed from now on (see cache).
func (c *cache) suspend() { c.trusted.Store(false) }

// reset: LISTEN is in effect again; whatever was missed is dropped. LISTEN
// just succeeded, so the database answers: the monitor is told first, or a
// reset before its next probe would leave the emptied codes answering 503
// (not cached, database still believed down).
func (c *cache) reset() {
	c.db.Reached()
	c.entries.Reset()
	c.trusted.Store(true)
}
