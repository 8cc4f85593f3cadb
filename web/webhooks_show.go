package web

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/cursor"
	"github.com/linkqr/linkqr/internal/webhook"
)

// deliveriesPageSize is how many attempts one page of the log lists.
const deliveriesPageSize = 50

// webhookShow is one subscription's page: its settings, health and actions,
// and its delivery log (newest first, one row per attempt) with a retry
// button per attempt.
func (u *UI) webhookShow(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	hook, ok := u.loadHook(w, r)
	if !ok {
		return
	}
	before, ok := u.pageCursor(w, r, r.URL.Query().Get("before"))
	if !ok {
		return
	}
	ds, more, err := u.Webhooks.ListDeliveries(r.Context(), ws.ID, hook.ID, before, deliveriesPageSize)
	if u.failed(w, r, err) {
		return
	}
	health, err := u.Webhooks.Health(r.Context(), ws.ID, []uuid.UUID{hook.ID})
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	view := WebhookView{Hook: hookRow(hook, health[hook.ID]), First: before == nil}
	for _, d := range ds {
		view.Deliveries = append(view.Deliveries, deliveryRow(d, hook.Status == webhook.StatusEnabled))
	}
	if more {
		view.Older = "?before=" + cursor.Encode(ds[len(ds)-1].ID)
	}
	view.Nav = u.nav(w, r, sectionWebhooks)
	Render(w, r, http.StatusOK, WebhookPage(view))
}
