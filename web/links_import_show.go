package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/budget"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/linkimport"
)

// importPageRows is how many rows one page of a dry run or result shows.
const importPageRows = 100

// importRefresh is how often the progress page reloads itself (seconds).
const importRefresh = 2

// outcomeLabels name the outcomes before (dry run) and after the import.
var outcomeLabels = map[linkimport.Outcome][2]string{
	linkimport.Created:        {"will be created", "created"},
	linkimport.Invalid:        {"invalid", "invalid"},
	linkimport.CodeTaken:      {"code taken", "code taken"},
	linkimport.DomainUnusable: {"domain unusable", "domain unusable"},
}

// outcomeOrder is the summary's order.
var outcomeOrder = []linkimport.Outcome{linkimport.Created, linkimport.Invalid, linkimport.CodeTaken, linkimport.DomainUnusable}

// loadImport reads the {import} of this workspace uploaded by the viewer;
// anything else (another person's, another workspace's, expired) is 404.
func (u *UI) loadImport(w http.ResponseWriter, r *http.Request) (linkimport.Import, bool) {
	ws, _ := workspaceFrom(r.Context())
	v, _ := viewerFrom(r.Context())
	importID, ok := id.Parse(importPrefix, chi.URLParam(r, "import"))
	if !ok {
		u.notFound(w, r)
		return linkimport.Import{}, false
	}
	imp, err := u.LinkImports.Get(r.Context(), ws.ID, v.User.ID, importID)
	if errors.Is(err, linkimport.ErrNotFound) {
		u.notFound(w, r)
		return imp, false
	}
	return imp, !u.failed(w, r, err)
}

// linksImportShow is an import's page: before confirmation its dry run
// (counts, then every row's outcome, problems first, 100 rows a page),
// while the job runs its progress (reloading itself), then its result
// with a link to each created link.
func (u *UI) linksImportShow(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	imp, ok := u.loadImport(w, r)
	if !ok {
		return
	}
	v := ImportView{
		Path: importPath(ws.ExternalID(), id.Format(importPrefix, imp.ID)), FileName: imp.FileName, KeepCodes: imp.KeepCodes,
		State: imp.State, Rows: imp.Rows, Processed: imp.Processed, Made: imp.Made, Error: imp.Error, Expires: formatTime(imp.ExpiresAt),
	}
	page := 1
	if p, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && p > 0 {
		page = p
	}
	var err error
	switch imp.State {
	case linkimport.StateUploaded:
		err = u.importPlan(r, imp, &v, page)
	case linkimport.StateQueued:
	default:
		err = u.importResults(r, imp, &v, page)
	}
	if err != nil {
		u.failed(w, r, err) // a budget's refusal has its own page
		return
	}
	v.Nav = u.nav(w, r, sectionLinks)
	if imp.State == linkimport.StateQueued {
		v.Nav.Refresh = importRefresh
	}
	Render(w, r, http.StatusOK, ImportPage(v))
}

// importPlan fills v with the dry run's counts and page of rows.
func (u *UI) importPlan(r *http.Request, imp linkimport.Import, v *ImportView, page int) error {
	ws, _ := workspaceFrom(r.Context())
	// The dry run parses the whole file again: the Upload budget admits it
	// at the file's cost first.
	release, err := budget.Admit(r.Context(), budget.Upload, ws.ID, linkimport.Cost(imp.Bytes))
	if err != nil {
		return err
	}
	defer release()
	plan, err := u.LinkImports.DryRun(r.Context(), ws.ID, imp)
	if err != nil {
		return err
	}
	v.setCounts(plan.Counts, 0)
	v.Pages = max(1, (len(plan.Rows)+importPageRows-1)/importPageRows)
	v.PageNumber = min(page, v.Pages)
	from := (v.PageNumber - 1) * importPageRows
	for _, p := range plan.Rows[from:min(from+importPageRows, len(plan.Rows))] {
		v.Page = append(v.Page, ImportRowView{Number: p.Number, Outcome: string(p.Outcome), Label: outcomeLabels[p.Outcome][0], Message: p.Message})
	}
	return nil
}

// importResults fills v with the outcome counts and page of rows.
func (u *UI) importResults(r *http.Request, imp linkimport.Import, v *ImportView, page int) error {
	ws, _ := workspaceFrom(r.Context())
	v.Pages = max(1, (imp.Processed+importPageRows-1)/importPageRows)
	v.PageNumber = min(page, v.Pages)
	rows, counts, err := u.LinkImports.Results(r.Context(), imp.ID, (v.PageNumber-1)*importPageRows, importPageRows)
	if err != nil {
		return err
	}
	v.setCounts(counts, 1)
	for _, res := range rows {
		row := ImportRowView{Number: res.Number, Outcome: string(res.Outcome), Label: outcomeLabels[res.Outcome][1], Message: res.Message}
		if res.LinkID != nil {
			row.LinkURL = linkPath(ws, *res.LinkID, "")
		}
		v.Page = append(v.Page, row)
	}
	return nil
}

// setCounts fills the summary: every outcome that occurs, in order.
func (v *ImportView) setCounts(counts map[linkimport.Outcome]int, label int) {
	for _, o := range outcomeOrder {
		if n := counts[o]; n > 0 || o == linkimport.Created {
			v.Counts = append(v.Counts, ImportCount{Outcome: string(o), Label: outcomeLabels[o][label], N: n})
		}
		if o == linkimport.Created {
			v.Creatable = counts[o]
		} else {
			v.Problems += counts[o]
		}
	}
}
