package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/linkqr/linkqr/internal/event"
)

// Queue is the River queue of webhook deliveries, kept apart from the
// housekeeping jobs so slow receivers never hold those up.
const Queue = "webhooks"

// DeliverArgs is the River job of one event for one subscription. The
// fan-out puts the event's envelope in it (Body), so an attempt reads no
// event; the subscription comes from the cache, which every change of it
// invalidates on every instance, so a disabled or deleted one receives
// nothing.
type DeliverArgs struct {
	SubscriptionID uuid.UUID  `json:"subscription_id"`
	WorkspaceID    uuid.UUID  `json:"workspace_id"`
	EventID        uuid.UUID  `json:"event_id"`
	EventType      event.Type `json:"event_type"`
	// DeliveryID is the pending delivery a manual retry completes; nil for
	// the automatic schedule.
	DeliveryID *uuid.UUID `json:"delivery_id,omitempty"`
	// Body is the request body, the event's envelope as compact JSON,
	// rendered at fan-out from the event as stored: the bytes the event row
	// renders to (loadAttempt), kept as a JSON string so they survive jsonb
	// unchanged. Empty in a manual retry's job (and in jobs enqueued before
	// it existed): the attempt renders it from the event row.
	Body string `json:"body,omitempty"`
}

// Kind names the job in River's table.
func (DeliverArgs) Kind() string { return "webhook_delivery" }

// InsertOpts puts deliveries on their queue with the attempts of the
// automatic schedule.
func (DeliverArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: MaxAttempts}
}

// Fanout is the event.Fanout of a deployment with webhooks: it enqueues one
// delivery job per enabled subscription of the event's workspace that
// lists its type, on tx (River's InsertManyTx), so the jobs exist exactly
// when the events do. A workspace without subscriptions costs a cache hit.
func (s *Service) Fanout(ctx context.Context, tx pgx.Tx, events []event.Recorded) error {
	var params []river.InsertManyParams
	for _, e := range events {
		ts, err := s.targets(ctx, tx, e.WorkspaceID)
		if err != nil {
			return err
		}
		var body string
		for _, t := range ts {
			if !slices.Contains(t.events, e.Type) {
				continue
			}
			if body == "" && e.Data != nil {
				b, err := json.Marshal(event.EnvelopeOf(e.ID, e.WorkspaceID, e.Type, e.CreatedAt, e.Data))
				if err != nil {
					return fmt.Errorf("encode %s event: %w", e.Type, err)
				}
				body = string(b)
			}
			params = append(params, river.InsertManyParams{Args: DeliverArgs{
				SubscriptionID: t.id, WorkspaceID: e.WorkspaceID, EventID: e.ID, EventType: e.Type, Body: body,
			}})
		}
	}
	if len(params) == 0 {
		return nil
	}
	if s.jobs == nil {
		return errors.New("webhook: no job client configured")
	}
	_, err := s.jobs.InsertManyTx(ctx, tx, params)
	return err
}
