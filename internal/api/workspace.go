package api

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/tz"
)

// workspaceJSON is the workspace object of GET /api/v1/workspace (the
// Workspace schema of internal/api/openapi.yaml).
type workspaceJSON struct {
	Object string `json:"object"`
	ID     string `json:"id"`
	Name   string `json:"name"`
	// Timezone is the IANA zone analytics answers are cut in when a
	// request names none.
	Timezone string   `json:"timezone"`
	Scopes   []string `json:"scopes"`
}

// getWorkspace answers GET /api/v1/workspace for any valid credential: the
// caller's workspace and the scopes the credential holds.
func (a *API) getWorkspace(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	p := auth.FromContext(r.Context())
	ws, err := a.Accounts.WorkspaceByID(r.Context(), p.WorkspaceID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, workspaceJSON{
		Object:   "workspace",
		ID:       id.Format(id.Workspace, ws.ID),
		Name:     ws.Name,
		Timezone: ws.Timezone.Name(),
		Scopes:   scope.Strings(p.Scopes),
	})
}

// patchWorkspace answers PATCH /api/v1/workspace (members:write, an
// admin's): {"timezone": "America/New_York"} sets the zone analytics use
// by default; an unknown zone is 422 at /timezone.
func (a *API) patchWorkspace(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	f, err := decodeObject(w, r)
	if err != nil {
		return err
	}
	f.rejectUnknown("timezone")
	name := f.str("timezone", false)
	zone, zerr := tz.Parse(name.Value)
	if name.Set && zerr != nil {
		f.errs.Add(f.ptr("timezone"), "must be an IANA time zone name such as America/New_York or UTC")
	}
	if err := f.errs.Err(); err != nil {
		return err
	}
	p := auth.FromContext(r.Context())
	if name.Set {
		if err := a.Accounts.SetTimezone(r.Context(), p.WorkspaceID, zone); err != nil {
			return err
		}
	}
	return a.getWorkspace(w, r)
}
