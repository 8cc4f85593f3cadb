package webhook

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/webhook/internal/webhookdb"
)

// HealthWindow is how far back Health looks.
const HealthWindow = 24 * time.Hour

// Health summarises a subscription's recent deliveries for the Settings
// page: how many attempts finished in the window, how many succeeded, how
// long they took and what went wrong last.
type Health struct {
	Attempts  int // finished attempts (succeeded or failed) in the window
	Succeeded int
	// P95 is the 95th percentile of the attempts' durations; nil when
	// none finished.
	P95 *time.Duration
	// LastFailureAt and LastFailureError describe the window's most recent
	// failed attempt; nil when there was none.
	LastFailureAt    *time.Time
	LastFailureError *string
}

// SuccessRate is Succeeded/Attempts in [0, 1]; ok is false when no attempt
// finished (a rate of nothing is not 0 %).
func (h Health) SuccessRate() (rate float64, ok bool) {
	if h.Attempts == 0 {
		return 0, false
	}
	return float64(h.Succeeded) / float64(h.Attempts), true
}

// Health returns the health over the last HealthWindow of the given
// subscriptions of the workspace, computed by one query over their
// delivery rows. A subscription without deliveries in the window is
// absent from the map (its zero Health says the same).
func (s *Service) Health(ctx context.Context, ws uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]Health, error) {
	out := make(map[uuid.UUID]Health, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := webhookdb.New().WebhookDeliveryHealth(ctx, s.db.Conn(ctx), webhookdb.WebhookDeliveryHealthParams{
		WorkspaceID: ws, SubscriptionIds: ids, Since: s.now().Add(-HealthWindow).UTC(),
	})
	if err != nil {
		return nil, store.InterpretError(err)
	}
	for _, r := range rows {
		h := Health{Attempts: int(r.Attempts), Succeeded: int(r.Succeeded)}
		if r.P95Ms >= 0 {
			d := time.Duration(r.P95Ms * float64(time.Millisecond))
			h.P95 = &d
		}
		if r.LastFailureError != "" {
			at, msg := r.LastFailureAt.UTC(), r.LastFailureError
			h.LastFailureAt, h.LastFailureError = &at, &msg
		}
		out[r.SubscriptionID] = h
	}
	return out, nil
}
