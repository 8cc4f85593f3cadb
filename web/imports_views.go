package web

import (
	"net/url"
	"strconv"

	"github.com/a-h/templ"
)

// ImportFormView is the Import CSV page: the upload form.
type ImportFormView struct {
	Nav       NavModel
	KeepCodes bool
	Error     string // why the last upload was refused
}

// ImportRowView is one row of a dry run or of a result.
type ImportRowView struct {
	Number  int
	Outcome string // "created", "invalid", "code_taken", "domain_unusable"
	Label   string // "will be created", "created", "invalid", …
	Message string
	LinkURL string // the created link's page; "" otherwise
}

// ImportCount is one outcome's number of rows, for the summary.
type ImportCount struct {
	Outcome, Label string
	N              int
}

// ImportView is an import's page: its dry run (State uploaded), its
// progress (queued) or its result (done, failed).
type ImportView struct {
	Nav        NavModel
	Path       string // "/w/ws_…/links/import/imp_…"
	FileName   string
	KeepCodes  bool
	State      string
	Rows       int // rows in the file
	Processed  int
	Made       int // links created so far
	Creatable  int // dry run: rows that will be created
	Problems   int // rows that will not be (or were not) created
	Error      string
	Expires    string
	Counts     []ImportCount
	Page       []ImportRowView
	PageNumber int
	Pages      int
}

// Percent is how far the import is, for the progress bar.
func (v ImportView) Percent() int {
	if v.Rows == 0 {
		return 100
	}
	return v.Processed * 100 / v.Rows
}

// pageHref is the page of rows n of this import.
func (v ImportView) pageHref(n int) templ.SafeURL {
	return templ.SafeURL(v.Path + "?" + url.Values{"page": {strconv.Itoa(n)}}.Encode() + "#rows")
}
