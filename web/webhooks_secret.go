package web

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/session"
)

// webhooksSecret shows a just-created or just-rotated signing secret
// exactly once: it is taken out of the server-side session, and the
// session saved, before the page is written, so a reload finds only the
// notice that it is no longer shown.
func (u *UI) webhooksSecret(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	ws, _ := workspaceFrom(r.Context())
	view := WebhookSecretView{}
	if h, ok := session.PeekNewWebhookSecret(v.Session); ok && h.WorkspaceID == ws.ExternalID() {
		session.PopNewWebhookSecret(v.Session)
		if !u.save(w, r, v.Session) {
			return
		}
		view.Shown, view.ID, view.URL, view.Secret, view.Rotated = true, h.WebhookID, h.URL, h.Secret, h.Rotated
	}
	view.Nav = u.nav(w, r, sectionWebhooks)
	Render(w, r, http.StatusOK, WebhookSecretPage(view))
}
