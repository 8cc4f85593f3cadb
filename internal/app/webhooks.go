package app

import (
	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/event"
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
	})
	if err != nil {
		return err
	}
	hooks.Subscribe(a.listener)
	a.Webhooks = hooks
	a.events = &event.Recorder{Fanout: hooks.Fanout}
	return nil
}
