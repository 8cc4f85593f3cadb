package web

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/session"
)

func (u *UI) workspaceNewForm(w http.ResponseWriter, r *http.Request) {
	Render(w, r, http.StatusOK, WorkspaceNewPage(WorkspaceNewView{Nav: u.nav(w, r, "")}))
}

// workspaceCreate creates another workspace administered by the viewer and
// makes it the current one.
func (u *UI) workspaceCreate(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	name := r.PostFormValue("name")
	ws, err := u.Accounts.NewWorkspace(r.Context(), v.User.ID, name)
	if errs, ok := fieldErrors(err); ok {
		Render(w, r, http.StatusUnprocessableEntity, WorkspaceNewPage(WorkspaceNewView{Nav: u.nav(w, r, ""), Name: name, Errors: errs}))
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	session.SetWorkspace(v.Session, ws.ID)
	u.redirectFlash(w, r, "/w/"+ws.ExternalID()+"/links", flashOK, "Workspace “"+ws.Name+"” created. You are its admin.")
}
