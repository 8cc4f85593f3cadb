package web

import (
	"net/http"
)

// workspaceSettings is GET /w/{ws}/settings/workspace (every member; the
// rename form is the admins').
func (u *UI) workspaceSettings(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	Render(w, r, http.StatusOK, WorkspaceSettingsPage(WorkspaceSettingsView{
		Nav: u.nav(w, r, sectionWorkspace), Name: ws.Name, Created: formatDate(ws.CreatedAt),
	}))
}

// workspaceRename renames the workspace (admins, through requireRole).
func (u *UI) workspaceRename(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	name := r.PostFormValue("name")
	renamed, err := u.Accounts.RenameWorkspace(r.Context(), ws.ID, name)
	if errs, ok := fieldErrors(err); ok {
		Render(w, r, http.StatusUnprocessableEntity, WorkspaceSettingsPage(WorkspaceSettingsView{
			Nav: u.nav(w, r, sectionWorkspace), Name: name, Created: formatDate(ws.CreatedAt), Errors: errs,
		}))
		return
	}
	if u.failed(w, r, err) {
		return
	}
	u.redirectFlash(w, r, "/w/"+ws.ExternalID()+"/settings/workspace", flashOK, "The workspace is now called “"+renamed.Name+"”.")
}
