package api

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/cursor"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/scan"
)

// listScans answers GET /api/v1/links/{id}/scans, newest first; bot scans
// are listed too, flagged with "bot": true.
func (a *API) listScans(w http.ResponseWriter, r *http.Request) error {
	linkID, err := pathID(r, id.Link)
	if err != nil {
		return err
	}
	pg, err := parsePageOf(r, cursor.DecodePosition)
	if err != nil {
		return err
	}
	ws := auth.FromContext(r.Context()).WorkspaceID
	if _, err := a.Links.Get(r.Context(), ws, linkID); err != nil {
		return err // unknown, deleted or another workspace's link: 404
	}
	scans, hasMore, err := a.Scans.List(r.Context(), ws, linkID, pg.before, pg.limit)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, newListAfter(scans, hasMore, scan.Scan.Wire, func(s scan.Scan) string { return cursor.EncodePosition(s.Position()) }))
}
