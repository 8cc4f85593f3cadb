package redirect

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/link"
)

// BudgetStore hands out blocks of links' scan budgets (max_scans);
// link.Service is the real one, over links.scans_granted.
type BudgetStore interface {
	// GrantScans reserves up to block(remaining) of the link's budget and
	// returns how many it got (0: none left, or no limit).
	GrantScans(ctx context.Context, id uuid.UUID, block func(remaining int64) int64) (int64, error)
	// ReturnScans gives back n unused scans of earlier grants.
	ReturnScans(ctx context.Context, id uuid.UUID, n int64) error
}

// Exact scan limits without a database round trip per scan
// (docs/targeting.md, "Scan limits"): an instance answers a human scan of
// a limited link with a 302 only out of a block of the budget that
// PostgreSQL granted it, under the link row's lock, so the blocks of all
// instances never add up to more than max_scans, and neither do the 302s.
// A block is an eighth of what is left (at most maxBlock), so most scans
// take one from memory and only the last few of a budget ask one by one;
// whatever an instance holds and does not use goes back: on shutdown, when
// another instance found the budget empty (LinkBudgetChannel), and when
// the limit changes.
const (
	maxBlock = 256
	// recheckEvery: how often an instance asks again for a budget it found
	// empty (another instance may have given scans back).
	recheckEvery = time.Second
)

// blockFor is the size of the next block when remaining scans are left.
func blockFor(remaining int64) int64 {
	return max(1, min(maxBlock, remaining/8))
}

// budgets is this instance's part of every limited link's budget.
type budgets struct {
	store BudgetStore
	mu    sync.Mutex
	links map[uuid.UUID]*budget
	now   func() time.Time
}

// budget is one link's: left unused scans granted to this instance.
type budget struct {
	mu      sync.Mutex
	max     int64 // the limit the grants were made under
	left    int64
	emptyAt time.Time // when the database last had none left (zero: it had)
}

func newBudgets(s BudgetStore) *budgets {
	return &budgets{store: s, links: map[uuid.UUID]*budget{}, now: time.Now}
}

func (bs *budgets) of(id uuid.UUID) *budget {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b := bs.links[id]
	if b == nil {
		b = &budget{}
		bs.links[id] = b
	}
	return b
}

// spent reports, from memory, whether t's budget is known to be used up
// here: the 410 for everyone (bots and HEAD included) without a take.
func (bs *budgets) spent(t *link.Target) bool {
	b := bs.of(t.LinkID)
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.max == t.MaxScans && b.left == 0 && !b.emptyAt.IsZero() && bs.now().Sub(b.emptyAt) < recheckEvery
}

// take uses one scan of t's budget: false when there is none left (the
// 410). It asks the database only when this instance's block is used up.
func (bs *budgets) take(ctx context.Context, t *link.Target) (bool, error) {
	b := bs.of(t.LinkID)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.max != t.MaxScans { // the limit changed: start over under the new one
		if err := bs.giveBack(ctx, t.LinkID, b); err != nil {
			return false, err
		}
		b.max, b.emptyAt = t.MaxScans, time.Time{}
	}
	if b.left > 0 {
		b.left--
		return true, nil
	}
	if !b.emptyAt.IsZero() && bs.now().Sub(b.emptyAt) < recheckEvery {
		return false, nil
	}
	n, err := bs.store.GrantScans(ctx, t.LinkID, blockFor)
	if err != nil {
		return false, err
	}
	if n == 0 {
		b.emptyAt = bs.now()
		return false, nil
	}
	b.left, b.emptyAt = n-1, time.Time{}
	return true, nil
}

// giveBack returns b's unused scans; b.mu held.
func (bs *budgets) giveBack(ctx context.Context, id uuid.UUID, b *budget) error {
	if b.left == 0 {
		return nil
	}
	if err := bs.store.ReturnScans(ctx, id, b.left); err != nil {
		return err
	}
	b.left = 0
	return nil
}

// release gives back this instance's unused scans of one link: another
// instance found its budget empty and may serve them.
func (bs *budgets) release(ctx context.Context, id uuid.UUID) error {
	bs.mu.Lock()
	b := bs.links[id]
	bs.mu.Unlock()
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.emptyAt = time.Time{}
	return bs.giveBack(ctx, id, b)
}

// releaseAll gives back every unused scan (shutdown).
func (bs *budgets) releaseAll(ctx context.Context) error {
	bs.mu.Lock()
	ids := make([]uuid.UUID, 0, len(bs.links))
	for id := range bs.links {
		ids = append(ids, id)
	}
	bs.mu.Unlock()
	var first error
	for _, id := range ids {
		if err := bs.release(ctx, id); err != nil && first == nil {
			first = err
		}
	}
	return first
}
