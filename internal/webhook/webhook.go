// Package webhook delivers a workspace's events to the URLs it subscribes:
// subscriptions (validated, SSRF-guarded, secrets encrypted at rest), the
// fan-out that enqueues one River job per matching subscription in the
// event's own transaction, the signed delivery worker with its retry
// schedule and auto-disable, and the per-workspace subscription cache that
// lets the scan hot path skip unsubscribed workspaces for free.
package webhook

import (
	"errors"
	"time"

	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/store/dbsqlc"
)

// Subscription statuses.
const (
	StatusEnabled  = "enabled"
	StatusDisabled = "disabled"
)

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)

// ChangedChannel is the NOTIFY channel carrying the workspace id of every
// subscription change, so every instance drops that workspace's cached
// subscriptions.
const ChangedChannel = "linkqr_webhook_changed"

// Limits of a subscription.
const (
	MaxURLBytes          = 2048
	MaxDescriptionChars  = 500
	SecretOverlap        = 24 * time.Hour     // the old secret keeps signing this long after a rotation
	DisableAfterFailures = 5 * 24 * time.Hour // failing this long without a success disables
)

// ErrDisabled is returned when a manual retry targets a disabled
// subscription; a disabled subscription receives nothing until re-enabled.
var ErrDisabled = errors.New("webhook subscription is disabled")

// Resource is the webhook object of CONTRACT.md section 6.5.
type Resource struct {
	Object      string       `json:"object"`
	ID          string       `json:"id"`
	WorkspaceID string       `json:"workspace_id"`
	URL         string       `json:"url"`
	Events      []event.Type `json:"events"`
	Description *string      `json:"description"`
	Status      string       `json:"status"`
	// Secret is set only in the results of Create and RotateSecret.
	Secret    string    `json:"secret,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// DisabledReason says why a subscription was disabled (by its owner, or
	// automatically after failing deliveries), for the Settings page; it is
	// not part of the API object.
	DisabledReason *string `json:"-"`
}

// Delivery is one attempt to deliver an event (CONTRACT.md section 6.5).
type Delivery struct {
	Object         string     `json:"object"`
	ID             string     `json:"id"`
	WebhookID      string     `json:"webhook_id"`
	EventID        string     `json:"event_id"`
	EventType      event.Type `json:"event_type"`
	Attempt        int        `json:"attempt"`
	Status         string     `json:"status"`
	ResponseStatus *int       `json:"response_status"`
	Error          *string    `json:"error"`
	DurationMS     *int       `json:"duration_ms"`
	CreatedAt      time.Time  `json:"created_at"`
	NextAttemptAt  *time.Time `json:"next_attempt_at"`
	// ResponseBody is the start (at most 1 KiB) of the receiver's answer,
	// for the Settings page; it is not part of the API object.
	ResponseBody *string `json:"-"`
}

func toResource(r dbsqlc.WebhookSubscription) Resource {
	events := make([]event.Type, len(r.Events))
	for i, e := range r.Events {
		events[i] = event.Type(e)
	}
	return Resource{
		Object:         "webhook",
		ID:             store.FormatID(store.PrefixWebhook, r.ID),
		WorkspaceID:    store.FormatID(store.PrefixWorkspace, r.WorkspaceID),
		URL:            r.URL,
		Events:         events,
		Description:    r.Description,
		Status:         r.Status,
		CreatedAt:      r.CreatedAt.UTC(),
		UpdatedAt:      r.UpdatedAt.UTC(),
		DisabledReason: r.DisabledReason,
	}
}

func toDelivery(r dbsqlc.WebhookDelivery) Delivery {
	return Delivery{
		Object:         "delivery",
		ID:             store.FormatID(store.PrefixDelivery, r.ID),
		WebhookID:      store.FormatID(store.PrefixWebhook, r.SubscriptionID),
		EventID:        store.FormatID(store.PrefixEvent, r.EventID),
		EventType:      event.Type(r.EventType),
		Attempt:        int(r.Attempt),
		Status:         r.Status,
		ResponseStatus: intPtr(r.ResponseStatus),
		Error:          r.Error,
		DurationMS:     intPtr(r.DurationMs),
		CreatedAt:      r.CreatedAt.UTC(),
		NextAttemptAt:  utcPtr(r.NextAttemptAt),
		ResponseBody:   r.ResponseBody,
	}
}

func intPtr(v *int32) *int {
	if v == nil {
		return nil
	}
	n := int(*v)
	return &n
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
