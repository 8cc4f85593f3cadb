package web

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/webhook"
	"github.com/linkqr/linkqr/internal/wire"
)

// webhooksPath is Settings → Webhooks of the workspace, plus rest.
func webhooksPath(ws account.Workspace, rest string) string {
	return "/w/" + ws.ExternalID() + "/settings/webhooks" + rest
}

// hookPath is one subscription's page, plus rest.
func hookPath(ws account.Workspace, id uuid.UUID, rest string) string {
	return webhooksPath(ws, "/"+wire.WebhookID(id)+rest)
}

// hookParam parses the {hook} URL parameter; ok is false (and a 404 page
// written) when it is not a webhook id.
func (u *UI) hookParam(w http.ResponseWriter, r *http.Request) (uuid.UUID, bool) {
	hookID, ok := id.Parse(id.Webhook, chi.URLParam(r, "hook"))
	if !ok {
		u.notFound(w, r)
	}
	return hookID, ok
}

// loadHook reads the {hook} subscription of the current workspace; on
// failure it has answered (404 for an unknown or other workspace's id).
func (u *UI) loadHook(w http.ResponseWriter, r *http.Request) (webhook.Resource, bool) {
	id, ok := u.hookParam(w, r)
	if !ok {
		return webhook.Resource{}, false
	}
	ws, _ := workspaceFrom(r.Context())
	hook, err := u.Webhooks.Get(r.Context(), ws.ID, id)
	if u.failed(w, r, err) {
		return webhook.Resource{}, false
	}
	return hook, true
}

// eventDescriptions explains each subscribable event type on the form.
var eventDescriptions = map[event.Type]string{
	event.ScanCreated: "a person scanned a QR code or opened a short URL (bots excluded)",
	event.LinkUpdated: "a link was re-pointed, retitled, paused, resumed or given a new expiry",
	event.LinkCreated: "a link was created",
	event.LinkDeleted: "a link was deleted",
}

// eventOptions lists every subscribable event type, checked when chosen.
func eventOptions(chosen []string) []EventOption {
	out := make([]EventOption, len(event.Types))
	for i, t := range event.Types {
		checked := false
		for _, c := range chosen {
			checked = checked || c == string(t)
		}
		out[i] = EventOption{Name: string(t), Description: eventDescriptions[t], Checked: checked}
	}
	return out
}

// hookRow presents a subscription with its health over the last 24 h.
func hookRow(h webhook.Resource, health webhook.Health) WebhookRow {
	row := WebhookRow{
		ID: wire.WebhookID(h.ID), URL: h.URL, Status: h.Status, Enabled: h.Status == webhook.StatusEnabled,
		CreatedAt: formatDate(h.CreatedAt),
	}
	for _, e := range h.Events {
		row.Events = append(row.Events, string(e))
	}
	if h.Description != nil {
		row.Description = *h.Description
	}
	if h.CreatedBy != nil {
		row.CreatedBy = *h.CreatedBy
	}
	if h.DisabledReason != nil && !row.Enabled {
		row.DisabledReason = capitalize(*h.DisabledReason) + "."
	}
	row.Health, row.Healthy = healthLine(health)
	if health.LastFailureAt != nil {
		row.LastFailure = "Last failure " + formatTime(*health.LastFailureAt) + ": " + *health.LastFailureError
	}
	return row
}

// healthLine is the one-line summary of a subscription's last 24 h, and
// whether it looks healthy (no failures, or none attempted).
func healthLine(h webhook.Health) (string, bool) {
	rate, ok := h.SuccessRate()
	if !ok {
		return "No deliveries in the last 24 h", true
	}
	s := fmt.Sprintf("%s delivered in the last 24 h (%d of %d attempts)", percent(rate), h.Succeeded, h.Attempts)
	if h.P95 != nil {
		s += " · p95 " + duration(*h.P95)
	}
	return s, h.Succeeded == h.Attempts
}

// percent renders a rate as "100 %", "99.5 %", never rounding a failure
// up to 100 %.
func percent(rate float64) string {
	if rate >= 1 {
		return "100 %"
	}
	p := rate * 100
	if p > 99.9 {
		p = 99.9
	}
	return strconv.FormatFloat(float64(int(p*10))/10, 'f', -1, 64) + " %"
}

// duration renders a delivery time: "<1 ms", "85 ms", "1.2 s".
func duration(d time.Duration) string {
	if d < time.Millisecond {
		return "<1 ms"
	}
	if d < time.Second {
		return strconv.Itoa(int(d.Milliseconds())) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}

// deliveryRow presents one attempt of the delivery log.
func deliveryRow(d webhook.Delivery, enabled bool) DeliveryRow {
	row := DeliveryRow{
		ID: wire.DeliveryID(d.ID), Status: d.Status, EventType: string(d.EventType), EventID: wire.EventID(d.EventID),
		Attempt: strconv.Itoa(d.Attempt), CreatedAt: formatSeconds(d.CreatedAt), ResponseCode: "—", Duration: "—",
		Retryable: enabled && d.Status != webhook.DeliveryPending,
	}
	if d.ResponseStatus != nil {
		row.ResponseCode = strconv.Itoa(*d.ResponseStatus)
	}
	if d.DurationMS != nil {
		row.Duration = duration(time.Duration(*d.DurationMS) * time.Millisecond)
	}
	if d.Error != nil {
		row.Error = *d.Error
	}
	if d.NextAttemptAt != nil && d.Status != webhook.DeliverySucceeded {
		row.NextAttempt = formatSeconds(*d.NextAttemptAt)
	}
	return row
}

// formatSeconds renders a timestamp to the second, in UTC (the column
// heading says so): the delivery log tells attempts seconds apart.
func formatSeconds(t time.Time) string { return t.UTC().Format("2 Jan, 15:04:05") }
