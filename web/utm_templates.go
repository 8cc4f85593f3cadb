package web

import (
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/utmtemplate"
)

// sectionUTMTemplates is Settings → UTM templates: every member reads
// them, and whoever may change links (scope.LinksWrite, the role table's
// answer for members and admins alike) manages them, as with the QR style.
const sectionUTMTemplates = "utm-templates"

// UTMTemplatesView is Settings → UTM templates.
type UTMTemplatesView struct {
	Nav       NavModel
	Templates []UTMTemplateRow
	Form      utmTemplateForm // the New template form, as typed after a refusal
	CanWrite  bool
	Max       int
	Full      bool // MaxPerWorkspace reached: no New template form
}

// UTMTemplateRow is one template in the list.
type UTMTemplateRow struct {
	ID, Name string
	Params   []utmParamView // the parameters it sets, in order
	Updated  string
}

type utmParamView struct{ Name, Value string }

// UTMTemplateView is one template's edit page.
type UTMTemplateView struct {
	Nav  NavModel
	Name string // as stored (the heading)
	Path string // "/w/ws_…/settings/utm-templates/tpl_…"
	Form utmTemplateForm
}

// utmTemplateForm is a template's fields as typed, and their messages.
type utmTemplateForm struct {
	Name   string
	Values [5]string
	Errors FieldErrors
}

func utmTemplatesPath(ws account.Workspace, rest string) string {
	return "/w/" + ws.ExternalID() + "/settings/utm-templates" + rest
}

func utmTemplateRow(t utmtemplate.Template) UTMTemplateRow {
	row := UTMTemplateRow{ID: id.Format(id.UTMTemplate, t.ID), Name: t.Name.String(), Updated: formatDate(t.UpdatedAt)}
	for _, p := range link.UTMParams {
		if v := t.UTM.Get(p); v != "" {
			row.Params = append(row.Params, utmParamView{Name: p.Name(), Value: v})
		}
	}
	return row
}

func utmTemplateFormOf(t utmtemplate.Template) utmTemplateForm {
	f := utmTemplateForm{Name: t.Name.String(), Errors: FieldErrors{}}
	for i, p := range link.UTMParams {
		f.Values[i] = t.UTM.Get(p)
	}
	return f
}

// postedUTMTemplate reads a posted template form and parses it with the
// domain's rule (utmtemplate.ParseInput); the form comes back as typed
// with its messages when it is refused.
func postedUTMTemplate(r *http.Request) (utmTemplateForm, utmtemplate.Input, bool) {
	f := utmTemplateForm{Name: trimmed(r, "name"), Errors: FieldErrors{}}
	for i, p := range link.UTMParams {
		f.Values[i] = trimmed(r, p.Name())
	}
	in, err := utmtemplate.ParseInput(f.Name, f.Values)
	if fe, bad := fieldErrors(err); bad {
		f.Errors = fe
		return f, in, false
	}
	return f, in, true
}

// utmTemplatesList shows the workspace's templates and the New template
// form.
func (u *UI) utmTemplatesList(w http.ResponseWriter, r *http.Request) {
	u.renderUTMTemplates(w, r, http.StatusOK, utmTemplateForm{Errors: FieldErrors{}})
}

func (u *UI) renderUTMTemplates(w http.ResponseWriter, r *http.Request, status int, form utmTemplateForm) {
	ws, _ := workspaceFrom(r.Context())
	ts, err := u.UTMTemplates.List(r.Context(), ws.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	v := UTMTemplatesView{Form: form, CanWrite: ws.Can(scope.LinksWrite), Max: utmtemplate.MaxPerWorkspace, Full: len(ts) >= utmtemplate.MaxPerWorkspace}
	for _, t := range ts {
		v.Templates = append(v.Templates, utmTemplateRow(t))
	}
	v.Nav = u.nav(w, r, sectionUTMTemplates)
	Render(w, r, status, UTMTemplatesPage(v))
}

// utmTemplatesCreate adds a template (utm_template.created in the audit
// log); a refusal shows the list again with the form as typed.
func (u *UI) utmTemplatesCreate(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	f, in, ok := postedUTMTemplate(r)
	if !ok {
		u.renderUTMTemplates(w, r, http.StatusUnprocessableEntity, f)
		return
	}
	t, err := u.UTMTemplates.Create(r.Context(), ws.ID, in)
	switch {
	case errors.Is(err, utmtemplate.ErrNameTaken):
		f.Errors["/name"] = capitalize(err.Error()) + "."
		u.renderUTMTemplates(w, r, http.StatusConflict, f)
		return
	case errors.Is(err, utmtemplate.ErrLimit):
		f.Errors["/name"] = capitalize(err.Error()) + "."
		u.renderUTMTemplates(w, r, http.StatusConflict, f)
		return
	case u.failed(w, r, err):
		return
	}
	u.redirectFlash(w, r, utmTemplatesPath(ws, ""), flashOK, "Template “"+t.Name.String()+"” added: the link forms offer it under “Fill from template”.")
}

// utmTemplateFrom loads the {template} of the current workspace; on
// failure it has answered (404 for a malformed id, an unknown one or
// another workspace's).
func (u *UI) utmTemplateFrom(w http.ResponseWriter, r *http.Request) (utmtemplate.Template, bool) {
	ws, _ := workspaceFrom(r.Context())
	tplID, ok := id.Parse(id.UTMTemplate, chi.URLParam(r, "template"))
	if !ok {
		u.notFound(w, r)
		return utmtemplate.Template{}, false
	}
	t, err := u.UTMTemplates.Get(r.Context(), ws.ID, tplID)
	if u.failed(w, r, err) {
		return utmtemplate.Template{}, false
	}
	return t, true
}

// utmTemplateEdit shows one template's edit form.
func (u *UI) utmTemplateEdit(w http.ResponseWriter, r *http.Request) {
	t, ok := u.utmTemplateFrom(w, r)
	if !ok {
		return
	}
	u.renderUTMTemplate(w, r, http.StatusOK, t, utmTemplateFormOf(t))
}

func (u *UI) renderUTMTemplate(w http.ResponseWriter, r *http.Request, status int, t utmtemplate.Template, f utmTemplateForm) {
	ws, _ := workspaceFrom(r.Context())
	v := UTMTemplateView{Name: t.Name.String(), Path: utmTemplatesPath(ws, "/"+id.Format(id.UTMTemplate, t.ID)), Form: f}
	v.Nav = u.nav(w, r, sectionUTMTemplates)
	Render(w, r, status, UTMTemplatePage(v))
}

// utmTemplateUpdate saves a template's name and values
// (utm_template.updated when something changed).
func (u *UI) utmTemplateUpdate(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	t, ok := u.utmTemplateFrom(w, r)
	if !ok {
		return
	}
	f, in, ok := postedUTMTemplate(r)
	if !ok {
		u.renderUTMTemplate(w, r, http.StatusUnprocessableEntity, t, f)
		return
	}
	saved, err := u.UTMTemplates.Update(r.Context(), ws.ID, t.ID, in)
	if errors.Is(err, utmtemplate.ErrNameTaken) {
		f.Errors["/name"] = capitalize(err.Error()) + "."
		u.renderUTMTemplate(w, r, http.StatusConflict, t, f)
		return
	}
	if u.failed(w, r, err) {
		return
	}
	u.redirectFlash(w, r, utmTemplatesPath(ws, ""), flashOK, "Template “"+saved.Name.String()+"” saved.")
}

// utmTemplateDelete deletes a template after a confirmation
// (utm_template.deleted); links keep the values they were filled with.
func (u *UI) utmTemplateDelete(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	t, ok := u.utmTemplateFrom(w, r)
	if !ok {
		return
	}
	if !u.confirmFirst(w, r, sectionUTMTemplates, ConfirmView{
		Title: "Delete this UTM template?", Button: "Delete template", Back: utmTemplatesPath(ws, "/"+id.Format(id.UTMTemplate, t.ID)),
		Message: "Delete the UTM template “" + t.Name.String() + "”? Links filled from it keep their values.",
	}) {
		return
	}
	if _, err := u.UTMTemplates.Delete(r.Context(), ws.ID, t.ID); u.failed(w, r, err) {
		return
	}
	u.redirectFlash(w, r, utmTemplatesPath(ws, ""), flashOK, "Template “"+t.Name.String()+"” deleted.")
}
