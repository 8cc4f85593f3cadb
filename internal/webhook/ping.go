package webhook

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/webhook/internal/webhookdb"
	"github.com/linkqr/linkqr/internal/wire"
)

// PingData is the data of a ping event: the subscription it tests (without
// its secret), so a receiver can tell which endpoint the test was for.
type PingData struct {
	Webhook wire.Webhook `json:"webhook"`
}

// SendTest records a ping event for one subscription and queues its
// delivery, returned as a pending delivery (attempt 1) that the worker
// completes exactly like any other: signed with the subscription's
// secrets, recorded in its delivery log, counted by OnAttempt. The event
// bypasses the fan-out, so no other subscription receives it, and it is
// attempted once (a test is repeated by pressing the button again, or by
// retrying its delivery). A disabled subscription gives ErrDisabled.
func (s *Service) SendTest(ctx context.Context, ws, subID uuid.UUID) (Delivery, error) {
	if s.jobs == nil {
		return Delivery{}, fmt.Errorf("webhook: no job client configured")
	}
	var row webhookdb.WebhookDelivery
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := webhookdb.New()
		sub, err := lockEnabled(ctx, tx, ws, subID)
		if err != nil {
			return err
		}
		// A nil Recorder writes the event without fan-out.
		evID, err := (*event.Recorder)(nil).Record(ctx, tx, ws, event.Ping, PingData{Webhook: toResource(sub).Wire()})
		if err != nil {
			return err
		}
		now := s.now().UTC()
		row, err = q.WebhookDeliveryInsert(ctx, tx, webhookdb.WebhookDeliveryInsertParams{
			ID: id.New(), WorkspaceID: ws, SubscriptionID: subID, EventID: evID,
			EventType: string(event.Ping), Attempt: 1, Status: DeliveryPending, CreatedAt: now, NextAttemptAt: &now,
		})
		if err != nil {
			return store.InterpretError(err)
		}
		args := DeliverArgs{SubscriptionID: subID, WorkspaceID: ws, EventID: evID, EventType: event.Ping, DeliveryID: &row.ID}
		if _, err := s.jobs.InsertManyTx(ctx, tx, []river.InsertManyParams{{Args: args, InsertOpts: &river.InsertOpts{Queue: Queue, MaxAttempts: 1}}}); err != nil {
			return fmt.Errorf("enqueue webhook test: %w", err)
		}
		return nil
	})
	if err != nil {
		return Delivery{}, err
	}
	return toDelivery(row), nil
}
