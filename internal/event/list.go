package event

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/store/dbsqlc"
)

// MaxWait bounds a long poll (GET /api/v1/events?wait=): below the
// 30-second idle timeouts of common proxies, and far below the server's
// write timeout.
const MaxWait = 25 * time.Second

// DefaultSettle is how old an event must be before a forward read (After)
// returns it. Event ids are UUIDv7, drawn when the event is recorded, but
// its transaction commits a moment later; a transaction that drew an
// earlier id can therefore become visible after a later one. A reader that
// moved its position past the later id would skip the earlier event
// forever. Returning only events recorded at least DefaultSettle ago makes
// that impossible for every transaction that commits within DefaultSettle
// of recording its events (the ones that record events are short: a link
// change, a scan batch).
const DefaultSettle = 2 * time.Second

// DefaultRecheck is how often a long poll re-runs its query while nothing
// has arrived. Between checks the request holds no database connection.
const DefaultRecheck = 500 * time.Millisecond

// Query is a parsed request for a page of a workspace's events.
type Query struct {
	// Types narrows the page to these types (default: every type of Types;
	// ping, sent to one subscription only, is never listed).
	Types []Type
	// Before continues a newest-first listing after the previous page's
	// last event (nil: from the newest).
	Before *uuid.UUID
	// After reads forward, oldest first, from just after this event id
	// (settled events only, see DefaultSettle). It excludes Before.
	After *uuid.UUID
	// Limit is the page size.
	Limit int
	// Wait, when positive, makes an empty page wait up to this long for a
	// matching event to appear before answering.
	Wait time.Duration
}

// Reader lists a workspace's events for GET /api/v1/events.
type Reader struct {
	DB *store.DB
	// Settle overrides DefaultSettle (0: the default).
	Settle time.Duration
	// Recheck overrides DefaultRecheck (0: the default).
	Recheck time.Duration
	// Stopping, when it reports true, ends long polls at their next
	// re-check with whatever they have (an empty page), so a draining
	// server does not hold requests for MaxWait. Nil: never.
	Stopping func() bool
}

// List returns one page of the workspace's events and whether more
// follow. With q.Wait, an empty page is re-checked every Recheck until an
// event appears, the wait ends, ctx ends or the server stops; only one
// query at a time holds a connection, for the length of that query.
func (r *Reader) List(ctx context.Context, ws uuid.UUID, q Query) ([]Envelope, bool, error) {
	deadline := time.Now().Add(q.Wait)
	for {
		page, more, err := r.page(ctx, ws, q)
		if err != nil || len(page) > 0 || !time.Now().Before(deadline) || r.stopping() {
			return page, more, err
		}
		t := time.NewTimer(min(r.recheck(), time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, false, ctx.Err()
		case <-t.C:
		}
	}
}

func (r *Reader) stopping() bool { return r.Stopping != nil && r.Stopping() }

func (r *Reader) recheck() time.Duration {
	if r.Recheck > 0 {
		return r.Recheck
	}
	return DefaultRecheck
}

func (r *Reader) settle() time.Duration {
	if r.Settle > 0 {
		return r.Settle
	}
	return DefaultSettle
}

// page runs the query once: limit+1 rows tell whether more follow.
func (r *Reader) page(ctx context.Context, ws uuid.UUID, q Query) ([]Envelope, bool, error) {
	types := make([]string, 0, len(Types))
	for _, t := range q.Types {
		types = append(types, string(t))
	}
	if len(q.Types) == 0 {
		for _, t := range Types {
			types = append(types, string(t))
		}
	}
	var (
		rows []dbsqlc.Event
		err  error
	)
	if q.After != nil {
		rows, err = dbsqlc.New().EventListAfter(ctx, r.DB.Conn(ctx), dbsqlc.EventListAfterParams{
			WorkspaceID: ws, Types: types, AfterID: *q.After,
			SettledAt: time.Now().Add(-r.settle()), Lim: int32(q.Limit + 1),
		})
	} else {
		rows, err = dbsqlc.New().EventListPage(ctx, r.DB.Conn(ctx), dbsqlc.EventListPageParams{
			WorkspaceID: ws, Types: types, BeforeID: q.Before, Lim: int32(q.Limit + 1),
		})
	}
	if err != nil {
		return nil, false, store.InterpretError(err)
	}
	more := len(rows) > q.Limit
	if more {
		rows = rows[:q.Limit]
	}
	out := make([]Envelope, len(rows))
	for i, row := range rows {
		out[i] = EnvelopeOf(row.ID, row.WorkspaceID, Type(row.Type), row.CreatedAt, row.Data)
	}
	return out, more, nil
}
