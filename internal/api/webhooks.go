package api

import (
	"encoding/json"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/webhook"
)

// createWebhook answers POST /api/v1/webhooks: 201 with the only copy of
// the signing secret the client will ever see.
func (a *API) createWebhook(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	f, err := decodeObject(w, r)
	if err != nil {
		return err
	}
	f.rejectUnknown("url", "events", "description")
	in := webhook.CreateInput{
		URL:         f.str("url", true).Value,
		Events:      f.strList("events", true).Value,
		Description: parseNullable(f, "description", f.nullableStr("description"), webhook.DescriptionRule.Parse).Value,
	}
	if err := f.errs.Err(); err != nil {
		return err
	}
	res, err := a.Webhooks.Create(r.Context(), auth.FromContext(r.Context()).WorkspaceID, in)
	if err != nil {
		return err
	}
	out := res.Wire()
	w.Header().Set("Location", a.BaseURL+"/api/v1/webhooks/"+out.ID)
	return writeJSON(w, http.StatusCreated, out)
}

// listWebhooks answers GET /api/v1/webhooks, newest first.
func (a *API) listWebhooks(w http.ResponseWriter, r *http.Request) error {
	pg, err := parsePage(r)
	if err != nil {
		return err
	}
	subs, hasMore, err := a.Webhooks.List(r.Context(), auth.FromContext(r.Context()).WorkspaceID, pg.before, pg.limit)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, newList(subs, hasMore, webhook.Resource.Wire, func(s webhook.Resource) uuid.UUID { return s.ID }))
}

// getWebhook answers GET /api/v1/webhooks/{id} (never with the secret).
func (a *API) getWebhook(w http.ResponseWriter, r *http.Request) error {
	hookID, err := bareID(r, id.Webhook)
	if err != nil {
		return err
	}
	res, err := a.Webhooks.Get(r.Context(), auth.FromContext(r.Context()).WorkspaceID, hookID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res.Wire())
}

// updateWebhook answers PATCH /api/v1/webhooks/{id}: change the URL, the
// events or the description, disable, or re-enable (status "enabled"
// after an automatic disable starts deliveries again).
func (a *API) updateWebhook(w http.ResponseWriter, r *http.Request) error {
	hookID, err := bareID(r, id.Webhook)
	if err != nil {
		return err
	}
	f, err := decodeObject(w, r)
	if err != nil {
		return err
	}
	f.rejectUnknown("url", "events", "description", "status")
	in := webhook.UpdateInput{
		URL:         optional(f.str("url", false)),
		Events:      optional(f.strList("events", false)),
		Description: optional(parseNullable(f, "description", f.nullableStr("description"), webhook.DescriptionRule.Parse)),
		Status:      optional(f.str("status", false)),
	}
	if err := f.errs.Err(); err != nil {
		return err
	}
	res, err := a.Webhooks.Update(r.Context(), auth.FromContext(r.Context()).WorkspaceID, hookID, in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res.Wire())
}

// optional carries a decoded member over to webhook's PATCH input.
func optional[T any](o link.Optional[T]) webhook.Optional[T] {
	return webhook.Optional[T]{Set: o.Set, Value: o.Value}
}

// deleteWebhook answers DELETE /api/v1/webhooks/{id}.
func (a *API) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	hookID, err := bareID(r, id.Webhook)
	if err != nil {
		return err
	}
	if err := a.Webhooks.Delete(r.Context(), auth.FromContext(r.Context()).WorkspaceID, hookID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// rotateWebhookSecret answers POST /api/v1/webhooks/{id}/rotate-secret:
// the new secret, shown once; the old one keeps signing for 24 hours.
func (a *API) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	hookID, err := bareID(r, id.Webhook)
	if err != nil {
		return err
	}
	if err := emptyBody(w, r); err != nil {
		return err
	}
	res, err := a.Webhooks.RotateSecret(r.Context(), auth.FromContext(r.Context()).WorkspaceID, hookID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res.Wire())
}

// listDeliveries answers GET /api/v1/webhooks/{id}/deliveries, newest first.
func (a *API) listDeliveries(w http.ResponseWriter, r *http.Request) error {
	hookID, err := pathID(r, id.Webhook)
	if err != nil {
		return err
	}
	pg, err := parsePage(r)
	if err != nil {
		return err
	}
	ds, hasMore, err := a.Webhooks.ListDeliveries(r.Context(), auth.FromContext(r.Context()).WorkspaceID, hookID, pg.before, pg.limit)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, newList(ds, hasMore, webhook.Delivery.Wire, func(d webhook.Delivery) uuid.UUID { return d.ID }))
}

// retryDelivery answers POST /api/v1/webhooks/{id}/deliveries/{dlv}/retry:
// 202 with the new attempt, pending until the worker has sent it.
func (a *API) retryDelivery(w http.ResponseWriter, r *http.Request) error {
	sub, err := pathID(r, id.Webhook)
	if err != nil {
		return err
	}
	dlv, ok := id.Parse(id.Delivery, chi.URLParam(r, "dlv"))
	if !ok {
		return id.ErrNotFound
	}
	if err := noQuery(r); err != nil {
		return err
	}
	if err := emptyBody(w, r); err != nil {
		return err
	}
	d, err := a.Webhooks.RetryDelivery(r.Context(), auth.FromContext(r.Context()).WorkspaceID, sub, dlv)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, d.Wire())
}

// testWebhook answers POST /api/v1/webhooks/{id}/test: a signed ping to
// this subscription only, through the normal delivery path (the same one
// as Settings → Webhooks → Send test event), answered with its delivery.
func (a *API) testWebhook(w http.ResponseWriter, r *http.Request) error {
	hookID, err := pathID(r, id.Webhook)
	if err != nil {
		return err
	}
	if err := noQuery(r); err != nil {
		return err
	}
	if err := emptyBody(w, r); err != nil {
		return err
	}
	d, err := a.Webhooks.SendTest(r.Context(), auth.FromContext(r.Context()).WorkspaceID, hookID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, d.Wire())
}

// emptyBody accepts the body of an action that takes no input: none at
// all, or an empty JSON object (what many clients send by default).
func emptyBody(w http.ResponseWriter, r *http.Request) error {
	if r.ContentLength == 0 && r.Header.Get("Content-Type") == "" {
		return nil
	}
	f, err := decodeObject(w, r)
	if err != nil {
		return err
	}
	f.rejectUnknown()
	return f.errs.Err()
}

// strList decodes an array-of-strings member; required reports a missing
// one. null or any other type is an error under the member's pointer.
func (f *fields) strList(name string, required bool) link.Optional[[]string] {
	if !f.has(name) {
		if required {
			f.errs.Add(f.ptr(name), "is required")
		}
		return link.Optional[[]string]{}
	}
	var list []string
	if f.isNull(name) || json.Unmarshal(f.m[name], &list) != nil {
		f.errs.Add(f.ptr(name), "must be an array of strings")
		return link.Optional[[]string]{}
	}
	return link.Some(list)
}
