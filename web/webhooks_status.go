package web

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/webhook"
)

// webhookSetStatus enables or disables a subscription. Enabling also
// re-enables one that linkqr disabled after days of failed deliveries.
func (u *UI) webhookSetStatus(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	id, ok := u.hookParam(w, r)
	if !ok {
		return
	}
	status := r.PostFormValue("status")
	if status != webhook.StatusEnabled && status != webhook.StatusDisabled {
		u.redirectFlash(w, r, hookPath(ws, id, ""), flashError, "Choose enabled or disabled.")
		return
	}
	_, err := u.Webhooks.Update(r.Context(), ws.ID, id, webhook.UpdateInput{Status: webhook.Some(status)})
	if u.failed(w, r, err) {
		return
	}
	msg := "The webhook is enabled: new events are delivered to it again."
	if status == webhook.StatusDisabled {
		msg = "The webhook is disabled: it receives nothing until you enable it again."
	}
	u.redirectFlash(w, r, hookPath(ws, id, ""), flashOK, msg)
}
