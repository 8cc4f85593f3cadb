package api

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/scope"
)

// workspaceJSON is the workspace object of GET /api/v1/workspace (the
// Workspace schema of internal/api/openapi.yaml).
type workspaceJSON struct {
	Object string   `json:"object"`
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
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
		Object: "workspace",
		ID:     id.Format(id.Workspace, ws.ID),
		Name:   ws.Name,
		Scopes: scope.Strings(p.Scopes),
	})
}
