package web

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/cursor"
)

// webhooksPageSize is how many subscriptions one page lists.
const webhooksPageSize = 50

// webhooksList shows the workspace's subscriptions, newest first, each with
// its status and its health over the last 24 hours (one query for the page).
func (u *UI) webhooksList(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	before, ok := u.pageCursor(w, r, r.URL.Query().Get("before"))
	if !ok {
		return
	}
	hooks, more, err := u.Webhooks.List(r.Context(), ws.ID, before, webhooksPageSize)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	ids := make([]uuid.UUID, len(hooks))
	for i, h := range hooks {
		ids[i] = h.ID
	}
	health, err := u.Webhooks.Health(r.Context(), ws.ID, ids)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	view := WebhooksView{First: before == nil}
	for _, h := range hooks {
		view.Hooks = append(view.Hooks, hookRow(h, health[h.ID]))
	}
	if more {
		view.Older = "?before=" + cursor.Encode(hooks[len(hooks)-1].ID)
	}
	view.Nav = u.nav(w, r, sectionWebhooks)
	Render(w, r, http.StatusOK, WebhooksPage(view))
}
