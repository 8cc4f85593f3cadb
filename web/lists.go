package web

import (
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/cursor"
)

// pageCursor parses a list page's ?before cursor c: nil for the first
// page; a malformed one answers 404 and ok is false.
func (u *UI) pageCursor(w http.ResponseWriter, r *http.Request, c string) (before *uuid.UUID, ok bool) {
	if c == "" {
		return nil, true
	}
	id, ok := cursor.Decode(c)
	if !ok {
		u.notFound(w, r)
		return nil, false
	}
	return &id, true
}

// startWorkspaceCSV starts a CSV attachment of the workspace's what
// ("audit", "links"), named after the workspace and the time, and returns
// the writer that records whether any of it was sent.
func startWorkspaceCSV(w http.ResponseWriter, what string, ws account.Workspace) *sentWriter {
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="`+what+"-"+ws.ExternalID()+"-"+time.Now().UTC().Format("20060102T1504Z")+`.csv"`)
	h.Set("Cache-Control", "no-store")
	return &sentWriter{ResponseWriter: w}
}
