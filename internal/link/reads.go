package link

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/epochcache"
	"github.com/linkqr/linkqr/internal/link/internal/linkdb"
	"github.com/linkqr/linkqr/internal/notify"
	"github.com/linkqr/linkqr/internal/store"
)

// RowChannel carries the id of every link whose row changed in a way a
// reader sees (all but the counters), sent by a trigger on links
// (db/migrations/00043_link_row_changed.sql), so every write path
// announces it, whichever package it is in.
const RowChannel = "linkqr_link_row"

// CountsChannel is notified once by each fold that moved links' scan_count
// and last_scanned_at, in the fold's transaction.
const CountsChannel = "linkqr_link_counts"

// readCacheSize bounds the links an instance holds for API reads: a few
// hundred bytes each, so at most a few MiB.
const readCacheSize = 20_000

// reads serves Get from memory, the way the redirect serves codes: an entry
// is dropped after a commit of this instance that changed its row (at once)
// and when RowChannel says another did; a load that raced with a drop is
// not stored (epochcache). The counters move with every fold, so they are
// not a reason to drop an entry: after each fold (CountsChannel) one query
// reads the counters of every cached link, and Get lays the newer of the
// two readings over the entry. A count is therefore as fresh as without the
// cache: a fold behind, plus the one query.
type reads struct {
	entries *epochcache.Cache[uuid.UUID, cachedLink]
	log     *slog.Logger
	// trusted is true while LISTEN is in effect (from its Reset on): only
	// then can no change go unheard, so only then are entries used.
	trusted atomic.Bool

	mu     sync.RWMutex
	counts map[uuid.UUID]counts // the latest refresh's counters

	refreshing atomic.Bool
	again      atomic.Bool
}

type cachedLink struct {
	link     Link
	loadedAt time.Time // when the load that read it began
}

type counts struct {
	scans  int64
	last   *time.Time
	readAt time.Time // when the refresh that read them began
}

func newReads() *reads {
	return &reads{entries: epochcache.New[uuid.UUID, cachedLink](readCacheSize), counts: map[uuid.UUID]counts{}, log: slog.Default()}
}

// get returns ws's link id from memory.
func (r *reads) get(ws, id uuid.UUID) (Link, bool) {
	if !r.trusted.Load() {
		return Link{}, false
	}
	e, ok := r.entries.Get(id)
	if !ok || e.link.WorkspaceID != ws {
		return Link{}, false
	}
	l := e.link
	r.mu.RLock()
	c, ok := r.counts[id]
	r.mu.RUnlock()
	if ok && c.readAt.After(e.loadedAt) {
		l.ScanCount, l.LastScannedAt = c.scans, c.last
	}
	return l, true
}

// epoch is read before a load; put stores its result unless a change was
// heard since.
func (r *reads) epoch() uint64 { return r.entries.Epoch() }

func (r *reads) put(l Link, epoch uint64, loadedAt time.Time) {
	if r.trusted.Load() {
		r.entries.Put(l.ID, cachedLink{link: l, loadedAt: loadedAt}, epoch)
	}
}

// reset drops everything; trusted says whether LISTEN is in effect.
func (r *reads) reset(trusted bool) {
	r.trusted.Store(trusted)
	r.entries.Reset()
}

// forget drops id after ctx's transaction commits (at once outside one).
func (r *reads) forget(ctx context.Context, ids ...uuid.UUID) {
	store.AfterCommit(ctx, func() {
		for _, id := range ids {
			r.entries.Invalidate(id)
		}
	})
}

// refresh reads the counters of every cached link, one query per 5,000;
// refreshes asked for while one runs are coalesced into one more.
func (r *reads) refresh(db *store.DB) {
	if !r.refreshing.CompareAndSwap(false, true) {
		r.again.Store(true)
		return
	}
	go func() {
		defer r.refreshing.Store(false)
		for {
			r.again.Store(false)
			r.refreshOnce(db)
			if !r.again.Load() {
				return
			}
		}
	}()
}

func (r *reads) refreshOnce(db *store.DB) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ids := r.entries.Keys()
	next := make(map[uuid.UUID]counts, len(ids))
	for len(ids) > 0 {
		batch := ids[:min(len(ids), 5000)]
		ids = ids[len(batch):]
		start := time.Now()
		rows, err := linkdb.New().LinkCounts(ctx, db.Conn(ctx), batch)
		if err != nil {
			// The entries keep the counters they were loaded with; the
			// next fold's refresh tries again. Drop them instead, so a
			// read is never more than a fold behind.
			r.log.Warn("link reads: refreshing scan counts failed; cached links dropped", "err", err)
			r.entries.Reset() // the epoch moves too: no load in flight is stored
			return
		}
		for _, row := range rows {
			next[row.ID] = counts{scans: row.ScanCount, last: row.LastScannedAt, readAt: start}
		}
	}
	r.mu.Lock()
	r.counts = next
	r.mu.Unlock()
}

// Subscribe serves Get from memory, coherent with every instance's
// changes: RowChannel drops a link, CountsChannel refreshes the counters,
// and while LISTEN is not in effect nothing is served from memory (a
// change may go unheard). A Service nobody subscribed reads the database
// every time.
func (s *Service) Subscribe(l *notify.Listener) {
	r := newReads()
	s.reads = r
	l.Subscribe(RowChannel, notify.Handler{
		Notify: func(payload string) {
			if id, err := uuid.Parse(payload); err == nil {
				r.entries.Invalidate(id)
			}
		},
		Reset:   func() { r.reset(true) },
		Suspend: func() { r.reset(false) },
	})
	l.Subscribe(CountsChannel, notify.Handler{
		Notify: func(string) { r.refresh(s.db) },
	})
}
