package redirect

import (
	"context"
	"sync"

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
// another instance found the budget empty (link.BudgetChannel), and when
// the limit changes.
//
// A budget found empty stays empty in this instance's memory: every
// request (humans, bots, HEAD) answers the scan-limit page without a
// query, until the limit changes (the cached target's MaxScans) or some
// instance gives scans back (link.BudgetReturnedChannel; and when the
// listener reconnects, since a notification may have been missed). The
// instance hears its own "empty" notification too: giving back what it
// holds (nothing) leaves its mark alone.
const maxBlock = 256

// blockFor is the size of the next block when remaining scans are left.
func blockFor(remaining int64) int64 {
	return max(1, min(maxBlock, remaining/8))
}

// budgets is this instance's part of every limited link's budget.
type budgets struct {
	store BudgetStore
	mu    sync.Mutex
	links map[uuid.UUID]*budget
}

// budget is one link's: left unused scans granted to this instance.
type budget struct {
	mu   sync.Mutex
	max  int64 // the limit the grants were made under
	left int64
	// empty: the database had none left when this instance last asked.
	empty bool
	// granted: the target, when read, had its whole budget granted
	// (link.Target.BudgetGranted); bots and HEAD take that as empty.
	granted bool
}

func newBudgets(s BudgetStore) *budgets {
	return &budgets{store: s, links: map[uuid.UUID]*budget{}}
}

// of returns t's budget, locked, started over when t's limit differs from
// the one it was kept under (after giving back what it held, which
// startOver's caller does).
func (bs *budgets) of(t *link.Target) *budget {
	bs.mu.Lock()
	b := bs.links[t.LinkID]
	if b == nil {
		b = &budget{max: t.MaxScans, granted: t.BudgetGranted}
		bs.links[t.LinkID] = b
	}
	bs.mu.Unlock()
	b.mu.Lock()
	return b
}

// spent reports, from memory, whether t's budget is used up as far as a
// request that takes nothing (a bot, HEAD) is concerned: this instance
// holds none of it, and the database had none left when last asked, or
// had granted all of it when t was read.
func (bs *budgets) spent(t *link.Target) bool {
	b := bs.of(t)
	defer b.mu.Unlock()
	if b.max != t.MaxScans {
		return t.BudgetGranted && b.left == 0
	}
	return b.left == 0 && (b.empty || b.granted)
}

// known reports whether this instance knows t's budget is empty (it asked
// and got nothing): the 410 for everyone, without a query.
func (bs *budgets) known(t *link.Target) bool {
	b := bs.of(t)
	defer b.mu.Unlock()
	return b.max == t.MaxScans && b.left == 0 && b.empty
}

// take uses one scan of t's budget: false when there is none left (the
// 410). It asks the database only when this instance's block is used up
// and it does not know the budget to be empty.
func (bs *budgets) take(ctx context.Context, t *link.Target) (bool, error) {
	b := bs.of(t)
	defer b.mu.Unlock()
	if b.max != t.MaxScans { // the limit changed: start over under the new one
		if err := bs.giveBack(ctx, t.LinkID, b); err != nil {
			return false, err
		}
		b.max, b.empty, b.granted = t.MaxScans, false, t.BudgetGranted
	}
	if b.left > 0 {
		b.left--
		return true, nil
	}
	if b.empty {
		return false, nil
	}
	n, err := bs.store.GrantScans(ctx, t.LinkID, blockFor)
	if err != nil {
		return false, err
	}
	if n == 0 {
		b.empty = true
		return false, nil
	}
	b.left, b.empty, b.granted = n-1, false, false
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

// lookup returns id's budget, nil when this instance keeps none.
func (bs *budgets) lookup(id uuid.UUID) *budget {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	return bs.links[id]
}

// release gives back this instance's unused scans of one link: another
// instance found its budget empty and may serve them. What this instance
// knows of the budget being empty stays.
func (bs *budgets) release(ctx context.Context, id uuid.UUID) error {
	b := bs.lookup(id)
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return bs.giveBack(ctx, id, b)
}

// returned forgets that id's budget was empty: an instance gave scans
// back, so the next human scan asks again.
func (bs *budgets) returned(id uuid.UUID) {
	if b := bs.lookup(id); b != nil {
		b.mu.Lock()
		b.empty, b.granted = false, false
		b.mu.Unlock()
	}
}

// forgetEmpty forgets every budget found empty (the listener reconnected:
// a BudgetReturnedChannel notification may have been missed).
func (bs *budgets) forgetEmpty() {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	for _, b := range bs.links {
		b.mu.Lock()
		b.empty, b.granted = false, false
		b.mu.Unlock()
	}
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
