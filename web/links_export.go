package web

import (
	"net/http"
	"strings"

	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/linkcsv"
	"github.com/linkqr/linkqr/internal/validate"
)

// linksExport downloads the links the page's filters find (the same
// ?q, ?status, ?domain and ?tag) as the CSV of GET /api/v1/links/export,
// streamed page by page, so memory stays flat at any size. A malformed
// filter is a 422 page; a failure once rows were sent can only cut the
// file short, and is logged.
func (u *UI) linksExport(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	var errs validate.Errors
	search := link.ParseFilter(r.URL.Query(), "", &errs).Search
	if fe, bad := fieldErrors(errs.Err()); bad {
		msgs := []string{sentence("The search", fe["/q"]), sentence("The status", fe["/status"]), sentence("The domain", fe["/domain"]), sentence("The tag filter", fe["/tag"])}
		u.errorPage(w, r, http.StatusUnprocessableEntity, "Invalid filter", strings.TrimSpace(strings.Join(msgs, " ")))
		return
	}
	out := startWorkspaceCSV(w, "links", ws)
	if err := linkcsv.Export(r.Context(), u.Links, ws.ID, search, out); err != nil {
		if !out.sent {
			w.Header().Del("Content-Disposition")
			u.failed(w, r, err) // a budget's refusal has its own page
			return
		}
		u.Log.Warn("links export cut short", "err", err)
	}
}

// sentWriter records whether anything was written, so a failure before
// the first byte can still be answered with an error page.
type sentWriter struct {
	http.ResponseWriter
	sent bool
}

func (s *sentWriter) Write(b []byte) (int, error) {
	s.sent = true
	return s.ResponseWriter.Write(b)
}

// Flush implements http.Flusher, so each page of the export goes out.
func (s *sentWriter) Flush() { _ = http.NewResponseController(s.ResponseWriter).Flush() }
