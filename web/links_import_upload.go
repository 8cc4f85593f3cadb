package web

import (
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/budget"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/linkcsv"
	"github.com/linkqr/linkqr/internal/linkimport"
)

// importPrefix names imports in addresses ("imp_…").
const importPrefix id.Prefix = "imp"

// linksImportForm is Links → Import CSV: the upload form.
func (u *UI) linksImportForm(w http.ResponseWriter, r *http.Request) {
	u.renderImportForm(w, r, http.StatusOK, true, "")
}

func (u *UI) renderImportForm(w http.ResponseWriter, r *http.Request, status int, keep bool, msg string) {
	Render(w, r, status, ImportFormPage(ImportFormView{Nav: u.nav(w, r, sectionLinks), KeepCodes: keep, Error: msg}))
}

// linksImportUpload reads the uploaded CSV (multipart, at most
// linkcsv.MaxImportBytes: protect's bodyLimit), refuses a file that is not an import as a whole
// (no target_url column, not CSV, too large, too many rows, no rows) with
// the reason on the form, and otherwise keeps it for this person and
// workspace and shows its dry run. Nothing is created here.
func (u *UI) linksImportUpload(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	v, _ := viewerFrom(r.Context())
	tooLarge := func() {
		u.renderImportForm(w, r, http.StatusRequestEntityTooLarge, true, capitalize(linkcsv.ErrTooLarge.Error())+".")
	}
	// Admitted before a byte is read, at the cost its Content-Length says
	// (at most the body limit); a refusal is a 429 or 503 page.
	size := r.ContentLength
	if size < 0 || size > linkcsv.MaxImportBytes+1<<20 {
		size = linkcsv.MaxImportBytes + 1<<20
	}
	release, err := budget.Admit(r.Context(), budget.Upload, ws.ID, linkimport.Cost(size))
	if err != nil {
		u.failed(w, r, err)
		return
	}
	defer release()
	var mbe *http.MaxBytesError
	if err := r.ParseMultipartForm(1 << 20); errors.As(err, &mbe) {
		tooLarge()
		return
	} else if err != nil {
		u.renderImportForm(w, r, http.StatusBadRequest, true, "Choose a CSV file to upload.")
		return
	}
	defer func() { _ = r.MultipartForm.RemoveAll() }()
	keep := r.FormValue("codes") != "new"
	f, hdr, err := r.FormFile("file")
	if err != nil {
		u.renderImportForm(w, r, http.StatusUnprocessableEntity, keep, "Choose a CSV file to upload.")
		return
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, linkcsv.MaxImportBytes+1))
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	rows, err := linkcsv.Parse(data, linkcsv.ImportOptions{KeepCodes: keep, Now: time.Now()})
	var fe *linkcsv.FileError
	switch {
	case errors.Is(err, linkcsv.ErrTooLarge):
		tooLarge()
		return
	case errors.As(err, &fe):
		u.renderImportForm(w, r, http.StatusUnprocessableEntity, keep, capitalize(fe.Message)+".")
		return
	case err != nil:
		u.serverError(w, r, err)
		return
	case len(rows) == 0:
		u.renderImportForm(w, r, http.StatusUnprocessableEntity, keep, "The file has a header row but no links: add one row per link below it.")
		return
	}
	imp, err := u.LinkImports.Save(r.Context(), ws.ID, v.User.ID, fileName(hdr.Filename), data, keep, len(rows))
	var quota *linkimport.QuotaError
	if errors.As(err, &quota) {
		w.Header().Set("Retry-After", strconv.Itoa(quota.Seconds()))
		u.renderImportForm(w, r, http.StatusTooManyRequests, keep, capitalize(quota.Error())+".")
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	http.Redirect(w, r, importPath(ws.ExternalID(), id.Format(importPrefix, imp)), http.StatusSeeOther)
}

// importPath is an import's page.
func importPath(ws, imp string) string { return "/w/" + ws + "/links/import/" + imp }

// fileName is an upload's name as shown: its base name, valid UTF-8, at
// most 100 characters.
func fileName(name string) string {
	name = strings.ToValidUTF8(filepath.Base(strings.ReplaceAll(name, `\`, "/")), "?")
	if name == "." || name == "/" || name == "" {
		name = "links.csv"
	}
	if utf8.RuneCountInString(name) > 100 {
		name = string([]rune(name)[:100])
	}
	return name
}
