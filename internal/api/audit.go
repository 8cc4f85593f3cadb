package api

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/validate"
)

// listAuditEvents answers GET /api/v1/audit-events: the workspace's audit
// log newest first, in cursor pages, filtered by action (exact or a prefix
// ending in "."), actor_id, target_id, since and until.
func (a *API) listAuditEvents(w http.ResponseWriter, r *http.Request) error {
	pg, err := parsePage(r, audit.Params...)
	if err != nil {
		return err
	}
	q, err := query(r)
	if err != nil {
		return err
	}
	f, refused := audit.ParseFilter(q.Get)
	if len(refused) > 0 {
		var errs validate.Errors
		for _, e := range refused {
			errs.Add("/query/"+e.Param, e.Detail)
		}
		return errs.Err()
	}
	p, err := a.Audit.List(r.Context(), auth.FromContext(r.Context()).WorkspaceID, f, pg.before, pg.limit)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, newList(p.Entries, p.More,
		func(e audit.Entry) audit.Entry { return e }, func(e audit.Entry) uuid.UUID { return e.ID }))
}
