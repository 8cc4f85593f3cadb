package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/webhook/internal/webhookdb"
	"github.com/linkqr/linkqr/internal/wire"
)

// DeliveryDetail is one delivery as its receiver saw it, for the delivery
// detail page: the request (headers with the signature, body) and every
// attempt of the same event to the same subscription with its response.
type DeliveryDetail struct {
	Delivery Delivery
	URL      string
	// Body is the request body: the event envelope, encoded exactly as the
	// worker encodes it for every attempt. Empty when the event is gone.
	Body string
	// Attempts are every attempt of the event, oldest first; each one's
	// request headers are RequestHeaders(attempt).
	Attempts []Delivery
}

// RequestHeaders are the headers an attempt was sent with. All but the
// signature follow from the event and the attempt number; the signature
// (it carries a timestamp) is the one recorded.
func (d DeliveryDetail) RequestHeaders(a Delivery) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent)
	h.Set(HeaderEventID, wire.EventID(a.EventID))
	h.Set(HeaderAttempt, strconv.Itoa(a.Attempt))
	if a.RequestSignature != "" {
		h.Set(HeaderSignature, a.RequestSignature)
	}
	return h
}

// DeliveryDetail loads a delivery of the workspace's subscription with the
// event it carried and all its attempts. Another workspace's ids are
// id.ErrNotFound.
func (s *Service) DeliveryDetail(ctx context.Context, ws, hookID, deliveryID uuid.UUID) (DeliveryDetail, error) {
	sub, err := s.Get(ctx, ws, hookID)
	if err != nil {
		return DeliveryDetail{}, err
	}
	q := webhookdb.New()
	row, err := q.WebhookDeliveryGetByID(ctx, s.db.Conn(ctx), webhookdb.WebhookDeliveryGetByIDParams{ID: deliveryID, SubscriptionID: hookID, WorkspaceID: ws})
	if err != nil {
		return DeliveryDetail{}, store.InterpretError(err)
	}
	d := DeliveryDetail{Delivery: toDelivery(row), URL: sub.URL}
	rows, err := q.WebhookDeliveryListByEvent(ctx, s.db.Conn(ctx), webhookdb.WebhookDeliveryListByEventParams{SubscriptionID: hookID, WorkspaceID: ws, EventID: row.EventID})
	if err != nil {
		return DeliveryDetail{}, store.InterpretError(err)
	}
	for _, r := range rows {
		d.Attempts = append(d.Attempts, toDelivery(r))
	}
	env, err := event.Load(ctx, s.db, ws, row.EventID)
	switch {
	case errors.Is(err, id.ErrNotFound):
		return d, nil
	case err != nil:
		return DeliveryDetail{}, err
	}
	body, err := json.Marshal(env)
	if err != nil {
		return DeliveryDetail{}, err
	}
	d.Body = string(body)
	return d, nil
}
