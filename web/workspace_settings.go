package web

import (
	"net/http"
	"strings"

	"github.com/linkqr/linkqr/internal/tz"
)

// workspaceSettings is GET /w/{ws}/settings/workspace (every member; the
// rename form is the admins').
func (u *UI) workspaceSettings(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	Render(w, r, http.StatusOK, WorkspaceSettingsPage(WorkspaceSettingsView{
		Nav: u.nav(w, r, sectionWorkspace), Name: ws.Name, Created: formatDate(ws.CreatedAt), Timezone: ws.Timezone.Name(),
	}))
}

// workspaceTimezone sets the zone analytics are cut in when a page or a
// request names none (admins, like PATCH /api/v1/workspace).
func (u *UI) workspaceTimezone(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	name := strings.TrimSpace(r.PostFormValue("timezone"))
	zone, err := tz.Parse(name)
	if err != nil {
		Render(w, r, http.StatusUnprocessableEntity, WorkspaceSettingsPage(WorkspaceSettingsView{
			Nav: u.nav(w, r, sectionWorkspace), Name: ws.Name, Created: formatDate(ws.CreatedAt), Timezone: name,
			Errors: FieldErrors{"/timezone": "must be an IANA time zone name such as America/New_York, Asia/Kolkata or UTC"},
		}))
		return
	}
	if u.failed(w, r, u.Accounts.SetTimezone(r.Context(), ws.ID, zone)) {
		return
	}
	u.redirectFlash(w, r, "/w/"+ws.ExternalID()+"/settings/workspace", flashOK, "Analytics now cut days and hours in "+zone.Name()+".")
}

// workspaceRename renames the workspace (admins, through requireRole).
func (u *UI) workspaceRename(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	name := r.PostFormValue("name")
	renamed, err := u.Accounts.RenameWorkspace(r.Context(), ws.ID, name)
	if errs, ok := fieldErrors(err); ok {
		Render(w, r, http.StatusUnprocessableEntity, WorkspaceSettingsPage(WorkspaceSettingsView{
			Nav: u.nav(w, r, sectionWorkspace), Name: name, Created: formatDate(ws.CreatedAt), Timezone: ws.Timezone.Name(), Errors: errs,
		}))
		return
	}
	if u.failed(w, r, err) {
		return
	}
	u.redirectFlash(w, r, "/w/"+ws.ExternalID()+"/settings/workspace", flashOK, "The workspace is now called “"+renamed.Name+"”.")
}
