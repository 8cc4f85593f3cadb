package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/webhook"
)

// webhookRetry sends a delivery's event to the subscription once more,
// now; the new attempt appears at the top of the delivery log.
func (u *UI) webhookRetry(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	id, dlv, ok := u.deliveryParams(w, r)
	if !ok {
		return
	}
	d, err := u.Webhooks.RetryDelivery(r.Context(), ws.ID, id, dlv)
	if errors.Is(err, webhook.ErrDisabled) {
		u.redirectFlash(w, r, hookPath(ws, id, ""), flashError, "The webhook is disabled: enable it to retry deliveries.")
		return
	}
	if u.failed(w, r, err) {
		return
	}
	u.redirectFlash(w, r, hookPath(ws, id, ""), flashOK,
		"Retrying the "+string(d.EventType)+" event now (attempt "+strconv.Itoa(d.Attempt)+").")
}

// deliveryParams are the webhook and delivery ids of the URL; a malformed
// one has been answered with 404 (ok false).
func (u *UI) deliveryParams(w http.ResponseWriter, r *http.Request) (hook, delivery uuid.UUID, ok bool) {
	if hook, ok = u.hookParam(w, r); !ok {
		return hook, delivery, false
	}
	if delivery, ok = id.Parse(id.Delivery, chi.URLParam(r, "delivery")); !ok {
		u.notFound(w, r)
	}
	return hook, delivery, ok
}
