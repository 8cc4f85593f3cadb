package web

import (
	"errors"
	"net/http"

	"github.com/linkqr/linkqr/internal/webhook"
)

// webhookSendTest queues a signed ping event for the subscription through
// the ordinary delivery path; its attempt appears in the delivery log.
func (u *UI) webhookSendTest(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	id, ok := u.hookParam(w, r)
	if !ok {
		return
	}
	_, err := u.Webhooks.SendTest(r.Context(), ws.ID, id)
	if errors.Is(err, webhook.ErrDisabled) {
		u.redirectFlash(w, r, hookPath(ws, id, ""), flashError, "The webhook is disabled: enable it to send a test event.")
		return
	}
	if u.failed(w, r, err) {
		return
	}
	u.redirectFlash(w, r, hookPath(ws, id, ""), flashOK,
		"A test event (ping) is on its way; reload in a moment to see its delivery below.")
}
