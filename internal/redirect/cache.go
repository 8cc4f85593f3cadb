package redirect

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/singleflight"

	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/store/dbsqlc"
)

// maxCached bounds the code cache; beyond it an arbitrary entry is evicted
// (it costs one indexed query to come back).
const maxCached = 200000

// target is everything the redirect needs to answer for one code.
type target struct {
	linkID      uuid.UUID
	workspaceID uuid.UUID
	url         string
	status      string
	expiresAt   *time.Time
	deleted     bool
}

// gone reports whether the link no longer redirects (410).
func (t *target) gone(now time.Time) bool {
	return t.deleted || t.status != "active" || (t.expiresAt != nil && !now.Before(*t.expiresAt))
}

// cache maps codes to targets. Entries are dropped when a link changes
// (locally after commit, remotely through NOTIFY); an epoch guard keeps a
// lookup that raced with a change from caching the old answer.
type cache struct {
	pool  *pgxpool.Pool
	group singleflight.Group

	mu      sync.RWMutex
	entries map[string]*target
	epoch   uint64
}

func newCache(pool *pgxpool.Pool) *cache {
	return &cache{pool: pool, entries: make(map[string]*target)}
}

// lookup returns the code's target, nil for an unknown code.
func (c *cache) lookup(ctx context.Context, code string) (*target, error) {
	c.mu.RLock()
	t, ok := c.entries[code]
	c.mu.RUnlock()
	if ok {
		return t, nil
	}
	v, err, _ := c.group.Do(code, func() (any, error) { return c.load(ctx, code) })
	if err != nil {
		return nil, err
	}
	return v.(*target), nil
}

func (c *cache) load(ctx context.Context, code string) (*target, error) {
	c.mu.RLock()
	epoch := c.epoch
	c.mu.RUnlock()
	row, err := dbsqlc.New().LinkResolveCode(ctx, c.pool, code)
	if err != nil {
		if errors.Is(store.InterpretError(err), store.ErrNotFound) {
			return (*target)(nil), nil // unknown codes are not cached: a create must be seen at once
		}
		return nil, store.InterpretError(err)
	}
	t := &target{
		linkID: row.ID, workspaceID: row.WorkspaceID, url: row.TargetURL,
		status: row.Status, expiresAt: row.ExpiresAt, deleted: row.DeletedAt != nil,
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch == epoch {
		if len(c.entries) >= maxCached {
			for k := range c.entries {
				delete(c.entries, k)
				break
			}
		}
		c.entries[code] = t
	}
	return t, nil
}

// invalidate drops one code.
func (c *cache) invalidate(code string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	delete(c.entries, code)
}

// reset drops every code (notifications may have been missed).
func (c *cache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	clear(c.entries)
}
