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

	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/store/dbsqlc"
)

// Type names an event.
type Type string

// The event types of CONTRACT.md section 7.
const (
	LinkCreated Type = "link.created"
	LinkUpdated Type = "link.updated"
	LinkDeleted Type = "link.deleted"
	ScanCreated Type = "scan.created"
)

// Types lists every event type.
var Types = []Type{ScanCreated, LinkUpdated, LinkCreated, LinkDeleted}

// Envelope is the event as delivered: the body of a webhook request.
type Envelope struct {
	ID          string          `json:"id"`
	Object      string          `json:"object"`
	Type        Type            `json:"type"`
	CreatedAt   time.Time       `json:"created_at"`
	WorkspaceID string          `json:"workspace_id"`
	Data        json.RawMessage `json:"data"`
}

// Record inserts an event in tx, the transaction that also holds the change.
// data is the event's "data" object.
func Record(ctx context.Context, tx pgx.Tx, workspaceID uuid.UUID, t Type, data any) (uuid.UUID, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return uuid.UUID{}, fmt.Errorf("encode %s event: %w", t, err)
	}
	id := store.NewID()
	err = dbsqlc.New().EventCreate(ctx, tx, dbsqlc.EventCreateParams{
		ID: id, WorkspaceID: workspaceID, Type: string(t), Data: raw, CreatedAt: time.Now().UTC(),
	})
	return id, store.InterpretError(err)
}
