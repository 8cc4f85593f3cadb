package web

import (
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
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
// linkcsv.MaxImportBytes: protect's bodyLimit) as it arrives, never whole
// in memory: the form's parts in their order, the file checked and stored
// a piece at a time (linkimport.Receive), the codes option wherever it
// comes. It refuses a file that is not an import as a whole (no
// target_url column, not CSV, too large, too many rows, no rows) with the
// reason on the form, and otherwise keeps it for this person and
// workspace and shows its dry run. Nothing is created here.
func (u *UI) linksImportUpload(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	v, _ := viewerFrom(r.Context())
	keep := true
	tooLarge := func() {
		u.renderImportForm(w, r, http.StatusRequestEntityTooLarge, keep, capitalize(linkcsv.ErrTooLarge.Error())+".")
	}
	// Admitted before a byte is read, at what reading any file holds.
	release, err := budget.Admit(r.Context(), budget.Upload, ws.ID, linkimport.UploadCost)
	if err != nil {
		u.failed(w, r, err)
		return
	}
	defer release()
	mr, err := r.MultipartReader()
	if err != nil {
		u.renderImportForm(w, r, http.StatusBadRequest, true, "Choose a CSV file to upload.")
		return
	}
	var (
		up      *linkimport.Upload
		fileErr error
		gotFile bool
		kept    bool
	)
	defer func() {
		if up != nil && !kept {
			u.LinkImports.Discard(r.Context(), ws.ID, up)
		}
	}()
	var mbe *http.MaxBytesError
	for parts := 0; ; parts++ {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.As(err, &mbe) {
			tooLarge()
			return
		}
		if err != nil {
			u.renderImportForm(w, r, http.StatusBadRequest, true, "Choose a CSV file to upload.")
			return
		}
		switch {
		case part.FormName() == "codes":
			b, err := io.ReadAll(io.LimitReader(part, 64))
			if errors.As(err, &mbe) {
				tooLarge()
				return
			}
			keep = string(b) != "new"
		case part.FormName() == "file" && part.FileName() != "" && !gotFile:
			gotFile = true
			body := &bodyReader{r: part}
			up, fileErr = u.LinkImports.Receive(r.Context(), ws.ID, v.User.ID, fileName(part.FileName()), body)
			if errors.As(fileErr, &mbe) {
				tooLarge()
				return
			}
			if body.err != nil && errors.Is(fileErr, body.err) { // the body broke off
				u.renderImportForm(w, r, http.StatusBadRequest, keep, "Choose a CSV file to upload.")
				return
			}
		}
		// Anything else is skipped by NextPart, within the body's limit.
	}
	var (
		fe    *linkcsv.FileError
		quota *linkimport.QuotaError
	)
	switch {
	case !gotFile:
		u.renderImportForm(w, r, http.StatusUnprocessableEntity, keep, "Choose a CSV file to upload.")
		return
	case errors.Is(fileErr, linkcsv.ErrTooLarge):
		tooLarge()
		return
	case errors.As(fileErr, &fe):
		u.renderImportForm(w, r, http.StatusUnprocessableEntity, keep, capitalize(fe.Message)+".")
		return
	case errors.As(fileErr, &quota):
	case fileErr != nil:
		u.serverError(w, r, fileErr)
		return
	case up.Rows == 0:
		u.renderImportForm(w, r, http.StatusUnprocessableEntity, keep, "The file has a header row but no links: add one row per link below it.")
		return
	default:
		fileErr = u.LinkImports.Keep(r.Context(), ws.ID, up, keep)
		kept = fileErr == nil
	}
	if errors.As(fileErr, &quota) {
		w.Header().Set("Retry-After", strconv.Itoa(quota.Seconds()))
		u.renderImportForm(w, r, http.StatusTooManyRequests, keep, capitalize(quota.Error())+".")
		return
	}
	if fileErr != nil {
		u.serverError(w, r, fileErr)
		return
	}
	http.Redirect(w, r, importPath(ws.ExternalID(), id.Format(importPrefix, up.ID)), http.StatusSeeOther)
}

// bodyReader remembers the error of the request body, so that a body
// that broke off is told from a failure of the database.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		b.err = err
	}
	return n, err
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
