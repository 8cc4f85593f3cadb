package redirect

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/dbhealth"
	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/id"
)

// SiteSource reads the servable custom domains (verified, of a live
// workspace); domain.Service is the real one.
type SiteSource interface {
	Sites(ctx context.Context) ([]domain.Site, error)
	// Site returns one, or id.ErrNotFound.
	Site(ctx context.Context, host string) (domain.Site, error)
}

// sites is every servable custom domain, in memory, keyed by hostname:
// a request's Host is matched without a database read, whatever it says,
// so a made-up Host costs a map lookup and nothing more.
//
// The whole table is read once, on the first request that needs it (and
// again when LISTEN comes back after a disconnection). After that a
// domain changes only through ChangedChannel: the notified hostname is
// marked stale, and the next request for it reads that one domain again
// before it is answered, as a re-pointed code is. Loads run one at a time
// (loadMu), so a slow full load can never overwrite a newer single read.
type sites struct {
	src SiteSource
	db  *dbhealth.Monitor

	table atomic.Pointer[map[string]*domain.Site] // nil until the first load

	loadMu sync.Mutex // held by every load, so their writes happen in order

	mu     sync.Mutex        // guards stale and seq
	stale  map[string]uint64 // hostname → the seq of its newest change mark
	seq    uint64
	nStale atomic.Int64 // len(stale), read without the lock on the hot path
}

func newSites(src SiteSource, db *dbhealth.Monitor) *sites {
	return &sites{src: src, db: db, stale: map[string]uint64{}}
}

// lookup returns the servable domain host (canonical hostname), nil when
// there is none.
func (s *sites) lookup(ctx context.Context, host string) (*domain.Site, error) {
	t := s.table.Load()
	if t == nil {
		var err error
		if t, err = s.loadAll(ctx); err != nil {
			return nil, err
		}
	}
	if s.nStale.Load() > 0 && s.isStale(host) {
		site, err := s.reload(ctx, host)
		if err == nil {
			return site, nil
		}
		if _, known := (*t)[host]; !known {
			return nil, err
		}
		// The database failed: serve what was known, as the code cache does.
	}
	return (*t)[host], nil
}

func (s *sites) isStale(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.stale[host]
	return ok
}

// loadAll reads the whole table, unless a concurrent call just did.
func (s *sites) loadAll(ctx context.Context) (*map[string]*domain.Site, error) {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if t := s.table.Load(); t != nil {
		return t, nil
	}
	return s.readAll(ctx)
}

// readAll replaces the table with what the database says now; loadMu held.
// Marks made meanwhile stay: the hosts they name are read again.
func (s *sites) readAll(ctx context.Context) (*map[string]*domain.Site, error) {
	if !s.db.Up() {
		return nil, ErrUnavailable
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), LookupTimeout)
	defer cancel()
	s.mu.Lock()
	seq := s.seq
	s.mu.Unlock()
	all, err := s.src.Sites(ctx)
	if err != nil {
		s.db.Observe(err)
		return nil, err
	}
	t := make(map[string]*domain.Site, len(all))
	for i := range all {
		t[all[i].Hostname] = &all[i]
	}
	s.table.Store(&t)
	s.clearMarks(func(host string, mark uint64) bool { return mark <= seq })
	return &t, nil
}

// reload reads one hostname again and puts the answer in the table.
func (s *sites) reload(ctx context.Context, host string) (*domain.Site, error) {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	s.mu.Lock()
	mark, stale := s.stale[host]
	s.mu.Unlock()
	if !stale { // another request read it while this one waited
		return (*s.table.Load())[host], nil
	}
	if !s.db.Up() {
		return nil, ErrUnavailable
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), LookupTimeout)
	defer cancel()
	site, err := s.src.Site(ctx, host)
	var found *domain.Site
	switch {
	case err == nil:
		found = &site
	case !errors.Is(err, id.ErrNotFound):
		s.db.Observe(err)
		return nil, err
	}
	s.edit(func(t map[string]*domain.Site) {
		if found == nil {
			delete(t, host)
		} else {
			t[host] = found
		}
	})
	s.clearMarks(func(h string, m uint64) bool { return h == host && m <= mark })
	return found, nil
}

// edit replaces the table by a changed copy; loadMu held. A copy per
// change keeps every read lock-free, and domains change rarely.
func (s *sites) edit(change func(map[string]*domain.Site)) {
	t := map[string]*domain.Site{}
	if old := s.table.Load(); old != nil {
		t = maps.Clone(*old)
	}
	change(t)
	s.table.Store(&t)
}

func (s *sites) clearMarks(done func(host string, mark uint64) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.DeleteFunc(s.stale, done)
	s.nStale.Store(int64(len(s.stale)))
}

// changed marks host stale: its next request reads it again.
func (s *sites) changed(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	s.stale[host] = s.seq
	s.nStale.Store(int64(len(s.stale)))
}

// workspaceDeleted drops the workspace's domains at once; a later read
// of them finds nothing (their workspace is deleted).
func (s *sites) workspaceDeleted(ws uuid.UUID) {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if s.table.Load() == nil {
		return
	}
	s.edit(func(t map[string]*domain.Site) {
		maps.DeleteFunc(t, func(_ string, site *domain.Site) bool { return site.WorkspaceID == ws })
	})
}

// reset: LISTEN is back, and changes may have been missed meanwhile. The
// table is read again in the background; until then the old one serves.
func (s *sites) reset() {
	if s.table.Load() == nil {
		return // never loaded: the first request reads it all anyway
	}
	go func() {
		s.loadMu.Lock()
		defer s.loadMu.Unlock()
		_, _ = s.readAll(context.Background()) // failure: the old table serves until the next reset
	}()
}
