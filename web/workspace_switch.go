package web

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/session"
	"github.com/linkqr/linkqr/internal/store"
)

// workspaceSwitch makes another of the viewer's workspaces the current one
// (kept in the session) and opens the same section there when the viewer
// may see it.
func (u *UI) workspaceSwitch(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	id, ok := store.ParseID(store.PrefixWorkspace, r.PostFormValue("workspace"))
	if !ok {
		u.notFound(w, r)
		return
	}
	ws, err := u.Accounts.Workspace(r.Context(), v.User.ID, id)
	if u.failed(w, r, err) {
		return
	}
	session.SetWorkspace(v.Session, ws.ID)
	if !u.save(w, r, v.Session) {
		return
	}
	rest := "/links"
	switch r.PostFormValue("section") {
	case sectionAPIKeys:
		rest = "/settings/api-keys"
	case sectionMembers:
		rest = "/settings/api-keys"
		if ws.IsAdmin() {
			rest = "/settings/members"
		}
	}
	http.Redirect(w, r, "/w/"+ws.ExternalID()+rest, http.StatusSeeOther)
}
