package web

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/webhook"
)

// webhookDeleteConfirm asks before deleting: a page of its own, so the
// confirmation works without JavaScript.
func (u *UI) webhookDeleteConfirm(w http.ResponseWriter, r *http.Request) {
	hook, ok := u.loadHook(w, r)
	if !ok {
		return
	}
	Render(w, r, http.StatusOK, WebhookDeletePage(WebhookDeleteView{Nav: u.nav(w, r, sectionWebhooks), Hook: hookRow(hook, webhook.Health{})}))
}

// webhookDelete deletes a subscription and its delivery log.
func (u *UI) webhookDelete(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	hook, ok := u.loadHook(w, r)
	if !ok {
		return
	}
	if u.failed(w, r, u.Webhooks.Delete(r.Context(), ws.ID, hook.ID)) {
		return
	}
	u.redirectFlash(w, r, webhooksPath(ws, ""), flashOK, "The webhook to "+hook.URL+" was deleted; it receives nothing more.")
}
