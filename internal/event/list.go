package event

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/event/internal/eventdb"
	"github.com/linkqr/linkqr/internal/store"
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
// has arrived when it has no Wakeup to tell it (a Reader without one).
// With one, an idle long poll runs no query at all.
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
	// Wakeup, when set, tells long polls of a workspace that it has new
	// events (the database's notification, see Wakeup): they query only
	// then, not every Recheck.
	Wakeup *Wakeup
}

// Page is one page of events and where the next one starts.
type Page struct {
	Events []Envelope
	// More reports that more events may follow (a type-filtered page can
	// end early, even empty, with More set: continue from Next).
	More bool
	// Next is the position after this page: the last event it examined
	// (the query's After when it examined none). A newest-first listing
	// continues before it; a forward one after it.
	Next uuid.UUID
}

// List returns one page of the workspace's events. With q.Wait, a page
// with nothing to report waits until the database notifies a new event of
// the workspace (with a Wakeup; without one it re-checks every Recheck),
// the wait ends, ctx ends or the server stops, and is then read again;
// an idle wait runs no query and holds no connection. A forward read
// (After) reads again once the new event has settled (DefaultSettle).
func (r *Reader) List(ctx context.Context, ws uuid.UUID, q Query) (Page, error) {
	deadline := time.Now().Add(q.Wait)
	var wake <-chan struct{}
	if r.Wakeup != nil && q.Wait > 0 {
		var stop func()
		wake, stop = r.Wakeup.watch(ws)
		defer stop()
	}
	first := true
	for {
		p, err := r.page(ctx, ws, q)
		if err != nil || len(p.Events) > 0 || p.More || !time.Now().Before(deadline) || r.stopping() {
			return p, err
		}
		if q.After != nil {
			q.After = &p.Next // what was examined need not be again
		}
		again, err := r.idle(ctx, wake, q.After != nil, first, deadline)
		if err != nil {
			return Page{}, err
		}
		if !again { // the wait ended, or the server stops: nothing came
			return p, nil
		}
		first = false
	}
}

// idle waits for the next reason to read again: a notification (then, for
// a forward read, the settling of the event it announced), the deadline,
// or the server stopping; without a wakeup channel, Recheck. A forward
// read's first wait also ends when events recorded just before the poll
// began, whose notification came before it, have settled: the poll reads
// once more after DefaultSettle, and from then on only when notified.
func (r *Reader) idle(ctx context.Context, wake <-chan struct{}, forward, first bool, deadline time.Time) (again bool, err error) {
	if wake == nil {
		t := time.NewTimer(min(r.recheck(), time.Until(deadline)))
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-t.C:
			return true, nil
		}
	}
	until := time.Until(deadline)
	settling := forward && first && r.settle() < until
	if settling {
		until = r.settle()
	}
	t := time.NewTimer(until)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-t.C:
		return settling, nil
	case <-r.Wakeup.stopped:
		return false, nil
	case <-wake:
	}
	if !forward {
		return true, nil
	}
	// Forward reads return settled events only: read when this one has.
	settle := time.NewTimer(min(r.settle(), time.Until(deadline)))
	defer settle.Stop()
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-settle.C:
		return true, nil
	case <-r.Wakeup.stopped:
		return false, nil
	}
}

func (r *Reader) stopping() bool {
	if r.Wakeup != nil {
		select {
		case <-r.Wakeup.stopped:
			return true
		default:
		}
	}
	return r.Stopping != nil && r.Stopping()
}

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

// page runs the query once. Without a type filter it reads limit+1 rows
// along events_workspace_idx; with one, it picks from a window of at most
// scanWindow rows (ids and types only) and then reads the rows picked, so
// a rare type among many others never makes one request read them all.
func (r *Reader) page(ctx context.Context, ws uuid.UUID, q Query) (Page, error) {
	if filters(q.Types) {
		return r.filtered(ctx, ws, q)
	}
	types := make([]string, len(Types))
	for i, t := range Types {
		types[i] = string(t)
	}
	var (
		rows []eventdb.Event
		err  error
	)
	if q.After != nil {
		rows, err = eventdb.New().EventListAfter(ctx, r.DB.Conn(ctx), eventdb.EventListAfterParams{
			WorkspaceID: ws, Types: types, AfterID: *q.After,
			SettledAt: time.Now().Add(-r.settle()), Lim: int32(q.Limit + 1),
		})
	} else {
		rows, err = eventdb.New().EventListPage(ctx, r.DB.Conn(ctx), eventdb.EventListPageParams{
			WorkspaceID: ws, Types: types, BeforeID: q.Before, Lim: int32(q.Limit + 1),
		})
	}
	if err != nil {
		return Page{}, store.InterpretError(err)
	}
	p := Page{More: len(rows) > q.Limit}
	if p.More {
		rows = rows[:q.Limit]
	}
	p.Events, p.Next = envelopes(rows), start(q)
	if len(rows) > 0 {
		p.Next = rows[len(rows)-1].ID
	}
	return p, nil
}

// scanWindow bounds the events a type-filtered page examines.
const scanWindow = 1000

// filters reports whether types leaves out some of Types.
func filters(types []Type) bool {
	return len(types) > 0 && len(types) < len(Types)
}

// start is the position a query starts from.
func start(q Query) uuid.UUID {
	if q.After != nil {
		return *q.After
	}
	return uuid.UUID{}
}

// scanned is an examined event: its id and type.
type scanned struct {
	id  uuid.UUID
	typ string
}

// filtered is page with a type filter (see page).
func (r *Reader) filtered(ctx context.Context, ws uuid.UUID, q Query) (Page, error) {
	window, err := r.scan(ctx, ws, q)
	if err != nil {
		return Page{}, err
	}
	p := Page{Next: start(q), More: len(window) == scanWindow}
	var picked []uuid.UUID
	for _, e := range window {
		if !slices.Contains(q.Types, Type(e.typ)) {
			p.Next = e.id
			continue
		}
		if len(picked) == q.Limit {
			p.More = true
			break
		}
		picked, p.Next = append(picked, e.id), e.id
	}
	if len(picked) == 0 {
		return p, nil
	}
	rows, err := eventdb.New().EventListByIDs(ctx, r.DB.Conn(ctx), eventdb.EventListByIDsParams{WorkspaceID: ws, Ids: picked})
	if err != nil {
		return Page{}, store.InterpretError(err)
	}
	slices.SortFunc(rows, func(a, b eventdb.Event) int {
		return slices.Index(picked, a.ID) - slices.Index(picked, b.ID)
	})
	p.Events = envelopes(rows)
	return p, nil
}

// scan reads the window of a filtered page, in the page's order.
func (r *Reader) scan(ctx context.Context, ws uuid.UUID, q Query) ([]scanned, error) {
	var out []scanned
	if q.After != nil {
		rows, err := eventdb.New().EventScanAfter(ctx, r.DB.Conn(ctx), eventdb.EventScanAfterParams{
			WorkspaceID: ws, AfterID: *q.After, SettledAt: time.Now().Add(-r.settle()), Lim: scanWindow,
		})
		for _, row := range rows {
			out = append(out, scanned{row.ID, row.Type})
		}
		return out, store.InterpretError(err)
	}
	rows, err := eventdb.New().EventScanPage(ctx, r.DB.Conn(ctx), eventdb.EventScanPageParams{
		WorkspaceID: ws, BeforeID: q.Before, Lim: scanWindow,
	})
	for _, row := range rows {
		out = append(out, scanned{row.ID, row.Type})
	}
	return out, store.InterpretError(err)
}

func envelopes(rows []eventdb.Event) []Envelope {
	out := make([]Envelope, len(rows))
	for i, row := range rows {
		out[i] = EnvelopeOf(row.ID, row.WorkspaceID, Type(row.Type), row.CreatedAt, row.Data)
	}
	return out
}
