package api

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/linkcsv"
	"github.com/linkqr/linkqr/internal/requestid"
	"github.com/linkqr/linkqr/internal/validate"
)

// exportLinks answers GET /api/v1/links/export: the links the list's
// filters find, as CSV, streamed a page at a time (memory stays flat
// whatever the workspace's size).
func (a *API) exportLinks(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	var errs validate.Errors
	checkKnownParams(q, &errs, link.FilterParams...)
	checkOnce(q, &errs)
	search := link.ParseFilter(q, "/query", &errs).Search
	if err := errs.Err(); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="links.csv"`)
	h.Set("Cache-Control", "no-store")
	out := &sentWriter{ResponseWriter: w}
	err = linkcsv.Export(r.Context(), a.Links, auth.FromContext(r.Context()).WorkspaceID, search, out)
	switch {
	case err != nil && !out.sent: // nothing sent yet: answer with the problem
		h.Del("Content-Disposition")
		return err
	case err != nil: // the status line is sent; a cut-short body is all the client sees
		a.Log.Warn("links export cut short", "request_id", requestid.FromContext(r.Context()), "err", err)
	}
	return nil
}

// sentWriter records whether anything was written, so that a failure
// before the first byte can still be answered with a problem.
type sentWriter struct {
	http.ResponseWriter
	sent bool
}

func (s *sentWriter) Write(b []byte) (int, error) {
	s.sent = true
	return s.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (s *sentWriter) Flush() { http.NewResponseController(s.ResponseWriter).Flush() }
