package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/id"
)

// getAnalytics answers GET /api/v1/links/{id}/analytics.
func (a *API) getAnalytics(w http.ResponseWriter, r *http.Request) error {
	linkID, err := pathID(r, id.Link)
	if err != nil {
		return err
	}
	q, err := query(r)
	if err != nil {
		return err
	}
	ws := auth.FromContext(r.Context()).WorkspaceID
	// The workspace's zone is the default; timezone= overrides it.
	workspace, err := a.Accounts.WorkspaceByID(r.Context(), ws)
	if err != nil {
		return err
	}
	rng, err := analytics.ParseRange(q, time.Now(), workspace.Timezone)
	if err != nil {
		return err
	}
	l, err := a.Links.Get(r.Context(), ws, linkID)
	if err != nil {
		return err
	}
	body, err := a.Analytics.Encoded(r.Context(), ws, linkID, rng, func(rep analytics.Report) ([]byte, error) {
		if l.Rules == nil && l.Split == nil {
			rep = rep.WithoutVariants()
		}
		return json.Marshal(rep)
	})
	if err != nil {
		return err
	}
	return writeJSONBytes(w, http.StatusOK, body)
}
