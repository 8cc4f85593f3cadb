// Package webhook delivers a workspace's events to the URLs it subscribes:
// subscriptions (validated, SSRF-guarded, secrets encrypted at rest), the
// fan-out that enqueues one River job per matching subscription in the
// event's own transaction, the signed delivery worker with its retry
// schedule and auto-disable, and the per-workspace subscription cache that
// lets the scan hot path skip unsubscribed workspaces for free.
package webhook

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/webhook/internal/webhookdb"
	"github.com/linkqr/linkqr/internal/wire"
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

// Resource is a webhook subscription. The domain keeps uuids and times;
// Wire formats it as the API's webhook object (the Webhook schema of
// internal/api/openapi.yaml).
type Resource struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	URL         string
	Events      []event.Type
	Description *string
	Status      string
	// Secret is set only in the results of Create and RotateSecret.
	Secret    string
	CreatedAt time.Time
	UpdatedAt time.Time
	// DisabledReason says why a subscription was disabled (by its owner, or
	// automatically after failing deliveries), for the Settings page; it is
	// not part of the API object.
	DisabledReason *string
	// CreatedBy names who created it ("ada@example.com", "API key key_…",
	// "operator"), for the Settings page; nil for subscriptions older than
	// the audit log. Stored with the subscription, so it outlives the audit
	// log's retention. Not part of the API object.
	CreatedBy *string
}

// Wire is the API's webhook object (the Webhook schema of
// internal/api/openapi.yaml); its secret is
// present only when r carries one (create, rotate).
func (r Resource) Wire() wire.Webhook {
	events := make([]string, len(r.Events))
	for i, e := range r.Events {
		events[i] = string(e)
	}
	return wire.Webhook{
		Object: "webhook", ID: wire.WebhookID(r.ID), WorkspaceID: wire.WorkspaceID(r.WorkspaceID),
		URL: r.URL, Events: events, Description: r.Description, Status: r.Status, Secret: r.Secret,
		CreatedAt: wire.Time(r.CreatedAt), UpdatedAt: wire.Time(r.UpdatedAt),
	}
}

// Delivery is one attempt to deliver an event (the Delivery schema of
// internal/api/openapi.yaml).
type Delivery struct {
	ID             uuid.UUID
	SubscriptionID uuid.UUID
	EventID        uuid.UUID
	EventType      event.Type
	Attempt        int
	Status         string
	ResponseStatus *int
	Error          *string
	DurationMS     *int
	CreatedAt      time.Time
	NextAttemptAt  *time.Time
	// ResponseBody is the start (at most 1 KiB) of the receiver's answer,
	// for the Settings page; it is not part of the API object.
	ResponseBody *string
	// RequestSignature and ResponseHeaders complete the delivery detail
	// page (Settings only): the Service-Signature header as sent and the
	// receiver's headers (bounded).
	RequestSignature string
	ResponseHeaders  map[string][]string
}

// Wire is the API's delivery object (the Delivery schema of
// internal/api/openapi.yaml).
func (d Delivery) Wire() wire.Delivery {
	return wire.Delivery{
		Object: "delivery", ID: wire.DeliveryID(d.ID), WebhookID: wire.WebhookID(d.SubscriptionID),
		EventID: wire.EventID(d.EventID), EventType: string(d.EventType), Attempt: d.Attempt, Status: d.Status,
		ResponseStatus: d.ResponseStatus, Error: d.Error, DurationMS: d.DurationMS,
		CreatedAt: wire.Time(d.CreatedAt), NextAttemptAt: wire.TimePtr(d.NextAttemptAt),
	}
}

func toResource(r webhookdb.WebhookSubscription) Resource {
	events := make([]event.Type, len(r.Events))
	for i, e := range r.Events {
		events[i] = event.Type(e)
	}
	return Resource{
		ID:             r.ID,
		WorkspaceID:    r.WorkspaceID,
		URL:            r.URL,
		Events:         events,
		Description:    r.Description,
		Status:         r.Status,
		CreatedAt:      r.CreatedAt.UTC(),
		UpdatedAt:      r.UpdatedAt.UTC(),
		DisabledReason: r.DisabledReason,
		CreatedBy:      r.CreatedBy,
	}
}

func toDelivery(r webhookdb.WebhookDelivery) Delivery {
	return Delivery{
		ID:               r.ID,
		SubscriptionID:   r.SubscriptionID,
		EventID:          r.EventID,
		EventType:        event.Type(r.EventType),
		Attempt:          int(r.Attempt),
		Status:           r.Status,
		ResponseStatus:   intPtr(r.ResponseStatus),
		Error:            r.Error,
		DurationMS:       intPtr(r.DurationMs),
		CreatedAt:        r.CreatedAt.UTC(),
		NextAttemptAt:    utcPtr(r.NextAttemptAt),
		ResponseBody:     r.ResponseBody,
		ResponseHeaders:  decodeHeaders(r.ResponseHeaders),
		RequestSignature: deref(r.RequestSignature),
	}
}

func decodeHeaders(b []byte) map[string][]string {
	var h map[string][]string
	if len(b) > 0 && json.Unmarshal(b, &h) != nil {
		return nil
	}
	return h
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
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
