package web

import (
	"net/http"
	"strings"

	"github.com/linkqr/linkqr/internal/session"
	"github.com/linkqr/linkqr/internal/text"
	"github.com/linkqr/linkqr/internal/validate"
	"github.com/linkqr/linkqr/internal/webhook"
	"github.com/linkqr/linkqr/internal/wire"
)

// webhooksNew shows the empty create form.
func (u *UI) webhooksNew(w http.ResponseWriter, r *http.Request) {
	Render(w, r, http.StatusOK, WebhookFormPage(u.hookFormView(w, r, hookForm{})))
}

// webhooksCreate creates a subscription and redirects (POST-redirect-GET)
// to the page that shows its secret once. Invalid input re-renders the
// form with webhook's messages next to each field.
func (u *UI) webhooksCreate(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	ws, _ := workspaceFrom(r.Context())
	f := parseHookForm(r)
	desc, own := f.description()
	in := webhook.CreateInput{URL: f.url, Events: f.events, Description: desc}
	if len(own) > 0 {
		u.hookFormFailed(w, r, f, errorsOf(own, u.Webhooks.ValidateCreate(r.Context(), in)))
		return
	}
	hook, err := u.Webhooks.Create(r.Context(), ws.ID, in)
	if err != nil {
		u.hookFormFailed(w, r, f, err)
		return
	}
	session.SetNewWebhookSecret(v.Session, session.NewWebhookSecret{
		WorkspaceID: ws.ExternalID(), WebhookID: wire.WebhookID(hook.ID), URL: hook.URL, Secret: hook.Secret,
	})
	if !u.save(w, r, v.Session) {
		return
	}
	http.Redirect(w, r, webhooksPath(ws, "/secret"), http.StatusSeeOther)
}

// hookForm is the posted create or edit form.
type hookForm struct {
	url, desc string
	events    []string
}

func parseHookForm(r *http.Request) hookForm {
	_ = r.ParseForm()
	return hookForm{url: strings.TrimSpace(r.PostFormValue("url")), desc: strings.TrimSpace(r.PostFormValue("description")), events: r.PostForm["events"]}
}

// description parses the form's description (nil when left empty); its
// refusal is the form's own field error, the URL and the events are the
// webhook service's to check.
func (f hookForm) description() (*text.Text, validate.Errors) {
	var errs validate.Errors
	d, err := webhook.DescriptionRule.ParseOptional(f.desc)
	errs.Check("/description", err)
	return d, errs
}

// hookFormView is the form filled in with f, without messages.
func (u *UI) hookFormView(w http.ResponseWriter, r *http.Request, f hookForm) WebhookFormView {
	return WebhookFormView{
		Nav: u.nav(w, r, sectionWebhooks), URL: f.url, Description: f.desc, Events: eventOptions(f.events),
		AllowPrivate: u.Config != nil && u.Config.WebhookAllowPrivate, Errors: FieldErrors{},
	}
}

// hookFormFailed shows the form again with the field errors of err (422),
// or the error page for anything else. Errors of single events
// ("/events/1") are shown at the events.
func (u *UI) hookFormFailed(w http.ResponseWriter, r *http.Request, f hookForm, err error, edit ...WebhookRow) {
	errs, ok := fieldErrors(err)
	if !ok {
		u.failed(w, r, err)
		return
	}
	view := u.hookFormView(w, r, f)
	for pointer, msg := range errs {
		if strings.HasPrefix(pointer, "/events/") {
			pointer = "/events"
		}
		view.Errors[pointer] = msg
	}
	if len(edit) == 1 {
		view.Editing, view.Hook = true, edit[0]
	}
	Render(w, r, http.StatusUnprocessableEntity, WebhookFormPage(view))
}
