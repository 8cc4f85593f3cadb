package web

import (
	"errors"
	"net/http"
	"time"

	"github.com/linkqr/linkqr/internal/erasure"
	"github.com/linkqr/linkqr/internal/store"
)

// workspaceExport is GET /w/{ws}/settings/workspace/export (admins): the
// workspace's archive, streamed as it is read. Once the first byte is out
// a failure can only cut the download short (the zip then does not open),
// so it is logged.
func (u *UI) workspaceExport(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	name := "linkqr-" + ws.ExternalID() + "-" + time.Now().UTC().Format("20060102") + ".zip"
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Cache-Control", "no-store")
	sum, err := u.Export.Workspace(r.Context(), ws.ID, w)
	if err != nil {
		u.Log.Error("workspace export failed", "workspace_id", ws.ExternalID(), "err", err)
		return
	}
	u.Log.Info("workspace exported", "workspace_id", ws.ExternalID(), "files", sum.Files)
}

// workspaceDelete is POST /w/{ws}/settings/workspace/delete (admins): the
// typed name must be the workspace's exactly, else the page comes back
// with the error and nothing changed.
func (u *UI) workspaceDelete(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	typed := r.PostFormValue("confirm")
	d, err := u.Erasure.DeleteWorkspaceNamed(r.Context(), ws.ID, typed)
	if errors.Is(err, erasure.ErrConfirmation) {
		detail := "must be the workspace’s name, exactly as shown"
		if typed == "" {
			detail = "is required"
		}
		Render(w, r, http.StatusUnprocessableEntity, WorkspaceSettingsPage(WorkspaceSettingsView{
			Nav: u.nav(w, r, sectionWorkspace), Name: ws.Name, Created: formatDate(ws.CreatedAt),
			Confirm: typed, Errors: FieldErrors{"/confirm": detail},
		}))
		return
	}
	if errors.Is(err, store.ErrNotFound) { // deleted meanwhile, by another admin
		u.notFound(w, r)
		return
	}
	if u.failed(w, r, err) {
		return
	}
	u.redirectFlash(w, r, "/", flashOK, "The workspace “"+d.Name+"” was deleted.")
}
