package web

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/utmtemplate"
	"github.com/linkqr/linkqr/internal/validate"
)

// utmForm is the UTM part of a link form (utm.templ's utmFields): the
// five parameters as typed, the template chosen in "Fill from template"
// and the workspace's templates to choose from.
type utmForm struct {
	Prefix    string    // the form's id prefix: "new" or "edit"
	Values    [5]string // in link.UTMParams order, as typed
	Template  string    // the tpl_… chosen ("" none)
	Templates []utmTemplateChoice
	Errors    FieldErrors // "/utm_source" …, "/utm_template"
	Submit    string      // the form's own submit label, for its implicit submission
	// Destination is where the saved link sends visitors, parameters
	// merged ("" when it has none, or on the New link form).
	Destination string
}

// utmTemplateChoice is one option of "Fill from template", carrying its
// values for the script that fills the fields at once.
type utmTemplateChoice struct {
	ID, Name string
	Values   [5]string
}

// open reports whether the fields hold anything or a message, so their
// section starts open.
func (f utmForm) open() bool {
	for _, v := range f.Values {
		if v != "" {
			return true
		}
	}
	if f.Errors["/utm_template"] != "" {
		return true
	}
	for _, p := range link.UTMParams {
		if f.Errors["/"+p.Name()] != "" {
			return true
		}
	}
	return false
}

// utmFormOf is the fields filled in with a link's parameters.
func utmFormOf(prefix string, utm link.UTM) utmForm {
	f := utmForm{Prefix: prefix}
	for i, p := range link.UTMParams {
		f.Values[i] = utm.Get(p)
	}
	return f
}

// postedUTM reads the fields of a posted link form, as typed (trimmed
// like the form's other fields).
func postedUTM(r *http.Request, prefix string) utmForm {
	f := utmForm{Prefix: prefix, Template: trimmed(r, "utm_template")}
	for i, p := range link.UTMParams {
		f.Values[i] = trimmed(r, p.Name())
	}
	return f
}

// applying reports whether the form was posted by "Apply" of "Fill from
// template" (without JavaScript) rather than by its own submit button.
func applying(r *http.Request) bool { return r.PostFormValue("utm_apply") != "" }

// parse reads the five values through link.ParseUTMValue, adding each
// refusal at its pointer. Empty is absent.
func (f utmForm) parse(errs *validate.Errors) link.UTM {
	var utm link.UTM
	for i, p := range link.UTMParams {
		v, err := link.ParseUTMValue(f.Values[i])
		if errs.Check("/"+p.Name(), err) {
			utm = utm.With(p, v)
		}
	}
	return utm
}

// patch is the form's values as a PATCH of all five parameters: the form
// shows every one, so an emptied field removes its parameter.
func (f utmForm) patch(errs *validate.Errors) link.UTMPatch {
	var p link.UTMPatch
	for i, param := range link.UTMParams {
		v, err := link.ParseUTMValue(f.Values[i])
		if errs.Check("/"+param.Name(), err) {
			p.Set(param, v)
		}
	}
	return p
}

// withTemplates adds the workspace's templates to choose from.
func (u *UI) withTemplates(ctx context.Context, ws uuid.UUID, f *utmForm) error {
	ts, err := u.UTMTemplates.List(ctx, ws)
	if err != nil {
		return err
	}
	f.Templates = f.Templates[:0]
	for _, t := range ts {
		c := utmTemplateChoice{ID: id.Format(id.UTMTemplate, t.ID), Name: t.Name.String()}
		for i, p := range link.UTMParams {
			c.Values[i] = t.UTM.Get(p)
		}
		f.Templates = append(f.Templates, c)
	}
	return nil
}

// errUnknownTemplate is an Apply naming no template of this workspace
// (deleted meanwhile, another workspace's, garbage).
var errUnknownTemplate = errors.New("this template no longer exists in this workspace: choose another")

// applyTemplate fills the five fields with the chosen template's values
// (every field: a parameter the template leaves out is emptied), keeping
// everything else typed. errUnknownTemplate when the workspace has no
// such template; a message at the select when none was chosen.
func (u *UI) applyTemplate(ctx context.Context, ws uuid.UUID, f *utmForm) error {
	if f.Errors == nil {
		f.Errors = FieldErrors{}
	}
	if f.Template == "" {
		f.Errors["/utm_template"] = "Choose a template to fill the fields from."
		return nil
	}
	tplID, ok := id.Parse(id.UTMTemplate, f.Template)
	var (
		t   utmtemplate.Template
		err error = id.ErrNotFound
	)
	if ok {
		t, err = u.UTMTemplates.Get(ctx, ws, tplID)
	}
	if errors.Is(err, id.ErrNotFound) {
		f.Errors["/utm_template"] = capitalize(errUnknownTemplate.Error()) + "."
		return errUnknownTemplate
	}
	if err != nil {
		return err
	}
	for i, p := range link.UTMParams {
		f.Values[i] = t.UTM.Get(p)
	}
	return nil
}

// applyStatus is the status of the page an Apply shows: 404 when the
// template was not found (the form is shown again all the same, nothing
// typed lost), else 200.
func applyStatus(err error) int {
	if errors.Is(err, errUnknownTemplate) {
		return http.StatusNotFound
	}
	return http.StatusOK
}
