package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/webhook"
)

// webhookRetry sends a delivery's event to the subscription once more,
// now; the new attempt appears at the top of the delivery log.
func (u *UI) webhookRetry(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	id, ok := u.hookParam(w, r)
	if !ok {
		return
	}
	dlv, ok := store.ParseID(store.PrefixDelivery, chi.URLParam(r, "delivery"))
	if !ok {
		u.notFound(w, r)
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
