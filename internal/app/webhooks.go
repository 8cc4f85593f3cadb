package app

import (
	"context"
	"time"

	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/metrics"
	"github.com/linkqr/linkqr/internal/webhook"
)

// newWebhooks builds the webhook service and the event recorder every
// event-writing service shares: its fan-out enqueues deliveries in the
// event's transaction. The River client is attached in newJobs, which
// registers the delivery worker.
func (a *App) newWebhooks() error {
	hooks, err := webhook.NewService(webhook.Options{
		DB:           a.DB,
		Log:          a.Log.With("component", "webhook"),
		Key:          config.DeriveKey(a.Config.SecretKey, "webhook-secrets"),
		AllowPrivate: a.Config.WebhookAllowPrivate,
		Pace:         a.deliveryPace,
		OnAttempt: func(status string, took time.Duration) {
			a.Metrics.WebhookDeliveries.WithLabelValues(status).Inc()
			a.Metrics.WebhookLatency.Observe(took.Seconds())
		},
	})
	if err != nil {
		return err
	}
	hooks.Subscribe(a.listener)
	a.Metrics.WebhookQueue(webhook.QueueStates, func(ctx context.Context) (metrics.QueueSnapshot, error) {
		st, err := hooks.QueueStats(ctx)
		return metrics.QueueSnapshot{Depth: st.Depth, OldestAge: st.OldestAvailableAge}, err
	})
	a.Webhooks = hooks
	a.events = &event.Recorder{Fanout: hooks.Fanout}
	return nil
}
