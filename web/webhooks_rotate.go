package web

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/session"
	"github.com/linkqr/linkqr/internal/wire"
)

// webhookRotate gives a subscription a new signing secret and shows it
// once, like a new subscription's (POST-redirect-GET); the old secret
// keeps signing alongside it for 24 hours.
func (u *UI) webhookRotate(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	ws, _ := workspaceFrom(r.Context())
	id, ok := u.hookParam(w, r)
	if !ok {
		return
	}
	hook, err := u.Webhooks.RotateSecret(r.Context(), ws.ID, id)
	if u.failed(w, r, err) {
		return
	}
	session.SetNewWebhookSecret(v.Session, session.NewWebhookSecret{
		WorkspaceID: ws.ExternalID(), WebhookID: wire.WebhookID(hook.ID), URL: hook.URL, Secret: hook.Secret, Rotated: true,
	})
	if !u.save(w, r, v.Session) {
		return
	}
	http.Redirect(w, r, webhooksPath(ws, "/secret"), http.StatusSeeOther)
}
