package web

import (
	"errors"
	"net/http"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/linkimport"
)

// linksImportStart confirms a dry run: the import's job starts creating
// the valid rows (1,000 per transaction) and the import's page shows its
// progress. Confirming twice starts it once.
func (u *UI) linksImportStart(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	v, _ := viewerFrom(r.Context())
	imp, ok := u.loadImport(w, r)
	if !ok {
		return
	}
	err := u.LinkImports.Start(r.Context(), ws.ID, v.User.ID, imp.ID)
	if errors.Is(err, linkimport.ErrNotFound) {
		u.notFound(w, r)
		return
	}
	if u.failed(w, r, err) {
		return
	}
	http.Redirect(w, r, importPath(ws.ExternalID(), id.Format(importPrefix, imp.ID)), http.StatusSeeOther)
}
