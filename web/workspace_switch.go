package web

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/session"
)

// workspaceSwitch makes another of the viewer's workspaces the current one
// (kept in the session) and opens the same section there when the viewer
// may see it.
func (u *UI) workspaceSwitch(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	ws, ok := u.viewerWorkspace(w, r, v, r.PostFormValue("workspace"))
	if !ok {
		return
	}
	session.SetWorkspace(v.Session, ws.ID)
	if !u.save(w, r, v.Session) {
		return
	}
	rest := "/links"
	switch r.PostFormValue("section") {
	case sectionApps:
		// Every workspace's apps are on the one page: stay there.
		http.Redirect(w, r, appsPath, http.StatusSeeOther)
		return
	case sectionOverview:
		rest = "/overview"
	case sectionAPIKeys:
		rest = "/settings/api-keys"
	case sectionMembers, sectionWebhooks, sectionOAuthClients:
		rest = "/settings/api-keys"
		if ws.IsAdmin() {
			rest = "/settings/" + r.PostFormValue("section")
		}
	}
	http.Redirect(w, r, "/w/"+ws.ExternalID()+rest, http.StatusSeeOther)
}
