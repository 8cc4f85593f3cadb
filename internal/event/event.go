// Package event records what happened in a workspace (link.created,
// link.updated, link.deleted, scan.created) in the transaction of the change
// itself, so no event exists without its change and no change without its
// event. Webhook delivery reads these rows.
package event

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/event/internal/eventdb"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/store"
)

// Type names an event.
type Type string

// The event types (docs/api.md#webhooks).
const (
	LinkCreated Type = "link.created"
	LinkUpdated Type = "link.updated"
	LinkDeleted Type = "link.deleted"
	ScanCreated Type = "scan.created"
)

// Ping is the test event sent from Settings → Webhooks ("Send test
// event") to one subscription, through the same signed delivery path as
// every other event. It is not subscribable: it is not in Types, so a
// subscription listing it is refused, and only that button produces it.
const Ping Type = "ping"

// Types lists every subscribable event type.
var Types = []Type{ScanCreated, LinkUpdated, LinkCreated, LinkDeleted}

// Known reports whether t is one of Types.
func Known(t Type) bool {
	for _, k := range Types {
		if k == t {
			return true
		}
	}
	return false
}

// Envelope is the event as delivered: the body of a webhook request.
type Envelope struct {
	ID          string          `json:"id"`
	Object      string          `json:"object"`
	Type        Type            `json:"type"`
	CreatedAt   time.Time       `json:"created_at"`
	WorkspaceID string          `json:"workspace_id"`
	Data        json.RawMessage `json:"data"`
}

// New is an event to be recorded.
type New struct {
	WorkspaceID uuid.UUID
	Type        Type
	Data        any // the event's "data" object
}

// Recorded is an event just written, as the fan-out sees it: enough to
// render its envelope (EnvelopeOf) without reading it back.
type Recorded struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	Type        Type
	CreatedAt   time.Time       // as stored (microseconds)
	Data        json.RawMessage // as stored: jsonb's rendering, the bytes Load gives
}

// Fanout runs in the transaction that recorded events, after they are
// written; webhook delivery uses it to enqueue one job per matching
// subscription on that same transaction, so the jobs commit (or roll back)
// with the events and the change behind them. An error aborts the change.
type Fanout func(ctx context.Context, tx pgx.Tx, events []Recorded) error

// Recorder writes events and hands them to its Fanout.
//
// Why a value with a hook, rather than event importing webhook or a
// package-level hook: webhook depends on event (types, Load), so event
// cannot call it directly; and a process-wide hook would be shared by every
// App in a process (the tests run many, each with its own database, River
// client and subscription cache). The app builds one Recorder at wiring time
// and gives it to every service that records events. A nil *Recorder
// records without fan-out, so services and tests without webhooks need no
// set-up.
type Recorder struct {
	Fanout Fanout
}

// Record inserts one event in tx, the transaction that also holds the
// change, and fans it out. data is the event's "data" object.
func (r *Recorder) Record(ctx context.Context, tx pgx.Tx, workspaceID uuid.UUID, t Type, data any) (uuid.UUID, error) {
	ids, err := r.RecordMany(ctx, tx, []New{{WorkspaceID: workspaceID, Type: t, Data: data}})
	if err != nil {
		return uuid.UUID{}, err
	}
	return ids[0], nil
}

// RecordMany inserts events in tx and fans them out with one call, so a
// batch (the scan writer's) enqueues its deliveries in one statement.
func (r *Recorder) RecordMany(ctx context.Context, tx pgx.Tx, events []New) ([]uuid.UUID, error) {
	if len(events) == 0 {
		return nil, nil
	}
	// Microseconds: what PostgreSQL stores, so the fan-out's copy and the
	// row agree exactly.
	now := time.Now().UTC().Truncate(time.Microsecond)
	ids := make([]uuid.UUID, len(events))
	recorded := make([]Recorded, len(events))
	p := eventdb.EventCreateManyParams{
		Ids: ids, WorkspaceIds: make([]uuid.UUID, len(events)), Types: make([]string, len(events)),
		Data: make([]string, len(events)), CreatedAt: now,
	}
	for i, e := range events {
		raw, err := json.Marshal(e.Data)
		if err != nil {
			return nil, fmt.Errorf("encode %s event: %w", e.Type, err)
		}
		ids[i] = id.New()
		p.WorkspaceIds[i], p.Types[i], p.Data[i] = e.WorkspaceID, string(e.Type), string(raw)
		recorded[i] = Recorded{ID: ids[i], WorkspaceID: e.WorkspaceID, Type: e.Type, CreatedAt: now}
	}
	// One statement however many: a bulk creation records a thousand.
	rows, err := eventdb.New().EventCreateMany(ctx, tx, p)
	if err != nil {
		return nil, store.InterpretError(err)
	}
	stored := make(map[uuid.UUID][]byte, len(rows))
	for _, row := range rows {
		stored[row.ID] = row.Data
	}
	for i := range recorded {
		recorded[i].Data = stored[recorded[i].ID]
	}
	if err := notifyRecorded(ctx, tx, events); err != nil {
		return nil, err
	}
	if r != nil && r.Fanout != nil {
		if err := r.Fanout(ctx, tx, recorded); err != nil {
			return nil, fmt.Errorf("fan out events: %w", err)
		}
	}
	return ids, nil
}

// Load returns a workspace's event as its envelope, or id.ErrNotFound.
// It reads through db, so inside an ambient transaction it sees that
// transaction's events.
func Load(ctx context.Context, db *store.DB, workspaceID, id uuid.UUID) (Envelope, error) {
	row, err := eventdb.New().EventGetByID(ctx, db.Conn(ctx), eventdb.EventGetByIDParams{ID: id, WorkspaceID: workspaceID})
	if err != nil {
		return Envelope{}, store.InterpretError(err)
	}
	return EnvelopeOf(row.ID, row.WorkspaceID, Type(row.Type), row.CreatedAt, row.Data), nil
}

// EnvelopeOf is the envelope of an event read by another query (the
// webhook worker reads it together with the subscription).
func EnvelopeOf(eventID, workspaceID uuid.UUID, t Type, createdAt time.Time, data json.RawMessage) Envelope {
	return Envelope{
		ID:          id.Format(id.Event, eventID),
		Object:      "event",
		Type:        t,
		CreatedAt:   createdAt.UTC(),
		WorkspaceID: id.Format(id.Workspace, workspaceID),
		Data:        data,
	}
}
