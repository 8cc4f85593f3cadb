package web

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/session"
)

// apiKeysSecret shows a just-minted key's secret exactly once. The secret
// is taken out of the server-side session, and the session saved, before
// the page is written: a reload, the back button (the page is no-store) or
// a second tab finds only the notice that it is no longer shown.
func (u *UI) apiKeysSecret(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	ws, _ := workspaceFrom(r.Context())
	view := APIKeySecretView{}
	if k, ok := session.PeekNewKey(v.Session); ok && k.WorkspaceID == ws.ExternalID() {
		session.PopNewKey(v.Session)
		if !u.save(w, r, v.Session) {
			return
		}
		view.Shown, view.Name, view.Secret = true, k.Name, k.Secret
	}
	view.Nav = u.nav(w, r, sectionAPIKeys)
	Render(w, r, http.StatusOK, APIKeySecretPage(view))
}
