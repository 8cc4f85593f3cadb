package web

import (
	"errors"
	"net/http"
	"time"

	"github.com/linkqr/linkqr/internal/erasure"
	"github.com/linkqr/linkqr/internal/id"
)

// workspaceExport is GET /w/{ws}/settings/workspace/export (admins): the
// workspace's archive, streamed as it is read. Once the first byte is out
// a failure can only cut the download short (the zip then does not open),
// so it is logged.
func (u *UI) workspaceExport(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	name := "linkqr-" + ws.ExternalID() + "-" + time.Now().UTC().Format("20060102") + ".zip"
	out := &archiveResponse{w: w, name: name}
	sum, err := u.Export.Workspace(r.Context(), ws.ID, out)
	if errors.Is(err, id.ErrNotFound) && !out.started { // deleted meanwhile
		u.notFound(w, r)
		return
	}
	if err != nil && !out.started {
		u.failed(w, r, err) // a budget's refusal has its own page
		return
	}
	if err != nil {
		u.Log.Error("workspace export failed", "workspace_id", ws.ExternalID(), "err", err)
		return
	}
	u.Log.Info("workspace exported", "workspace_id", ws.ExternalID(), "files", sum.Files)
}

// archiveResponse sets the download's headers with its first byte, so
// that an export failing before it can still answer with a page.
type archiveResponse struct {
	w       http.ResponseWriter
	name    string
	started bool
}

func (a *archiveResponse) Write(b []byte) (int, error) {
	if !a.started {
		a.started = true
		h := a.w.Header()
		h.Set("Content-Type", "application/zip")
		h.Set("Content-Disposition", `attachment; filename="`+a.name+`"`)
		h.Set("Cache-Control", "no-store")
	}
	return a.w.Write(b)
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
	if errors.Is(err, id.ErrNotFound) { // deleted meanwhile, by another admin
		u.notFound(w, r)
		return
	}
	if u.failed(w, r, err) {
		return
	}
	u.redirectFlash(w, r, "/", flashOK, "The workspace “"+d.Name+"” was deleted.")
}
