package web

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/webhook"
)

// webhookEdit shows the edit form of a subscription: URL, events and
// description (status has its own button on the subscription's page).
func (u *UI) webhookEdit(w http.ResponseWriter, r *http.Request) {
	hook, ok := u.loadHook(w, r)
	if !ok {
		return
	}
	f := hookForm{url: hook.URL}
	for _, e := range hook.Events {
		f.events = append(f.events, string(e))
	}
	if hook.Description != nil {
		f.desc = *hook.Description
	}
	view := u.hookFormView(w, r, f)
	view.Editing, view.Hook = true, hookRow(hook, webhook.Health{})
	Render(w, r, http.StatusOK, WebhookFormPage(view))
}

// webhookUpdate saves the edit form; an empty description removes it.
func (u *UI) webhookUpdate(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	hook, ok := u.loadHook(w, r)
	if !ok {
		return
	}
	f := parseHookForm(r)
	desc, own := f.description()
	in := webhook.UpdateInput{URL: webhook.Some(f.url), Events: webhook.Some(f.events), Description: webhook.Some(desc)}
	if len(own) > 0 {
		u.hookFormFailed(w, r, f, errorsOf(own, u.Webhooks.ValidateUpdate(r.Context(), in)), hookRow(hook, webhook.Health{}))
		return
	}
	_, err := u.Webhooks.Update(r.Context(), ws.ID, hook.ID, in)
	if err != nil {
		u.hookFormFailed(w, r, f, err, hookRow(hook, webhook.Health{}))
		return
	}
	u.redirectFlash(w, r, hookPath(ws, hook.ID, ""), flashOK, "The webhook was saved.")
}
