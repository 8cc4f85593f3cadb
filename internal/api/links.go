package api

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/validate"
)

// linkID parses the {id} URL parameter; a malformed id is simply not found.
func linkID(r *http.Request) (uuid.UUID, error) {
	id, ok := store.ParseID(store.PrefixLink, chi.URLParam(r, "id"))
	if !ok {
		return uuid.UUID{}, store.ErrNotFound
	}
	return id, nil
}

// noQuery rejects query parameters on endpoints that take none.
func noQuery(r *http.Request) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	var errs validate.Errors
	checkKnownParams(q, &errs)
	return errs.Err()
}

// createLink answers POST /api/v1/links.
func (a *API) createLink(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	f, err := decodeObject(w, r)
	if err != nil {
		return err
	}
	f.rejectUnknown("target_url", "title", "code", "expires_at")
	in := link.CreateInput{
		TargetURL: f.str("target_url", true).Value,
		Title:     f.nullableStr("title").Value,
		Code:      optionalPtr(f.str("code", false)),
		ExpiresAt: f.nullableTime("expires_at").Value,
	}
	if err := f.err(in.Validate(time.Now())); err != nil {
		return err
	}
	res, err := a.Links.Create(r.Context(), auth.FromContext(r.Context()).WorkspaceID, in)
	if errors.Is(err, link.ErrCodeTaken) {
		return problem.New(problem.Conflict, fmt.Sprintf("code %q is already taken (codes of deleted links are never reused)", *in.Code))
	}
	if err != nil {
		return err
	}
	w.Header().Set("Location", a.BaseURL+"/api/v1/links/"+res.ID)
	return writeJSON(w, http.StatusCreated, res)
}

// listLinks answers GET /api/v1/links, newest first.
func (a *API) listLinks(w http.ResponseWriter, r *http.Request) error {
	pg, err := parsePage(r)
	if err != nil {
		return err
	}
	links, hasMore, err := a.Links.List(r.Context(), auth.FromContext(r.Context()).WorkspaceID, pg.before, pg.limit)
	if err != nil {
		return err
	}
	var last uuid.UUID
	if len(links) > 0 {
		last, _ = store.ParseID(store.PrefixLink, links[len(links)-1].ID)
	}
	return writeJSON(w, http.StatusOK, newList(links, hasMore, last))
}

// optionalPtr is a given value's address, nil for an absent one.
func optionalPtr[T any](o link.Optional[T]) *T {
	if !o.Set {
		return nil
	}
	return &o.Value
}

// getLink answers GET /api/v1/links/{id}.
func (a *API) getLink(w http.ResponseWriter, r *http.Request) error {
	id, err := linkID(r)
	if err != nil {
		return err
	}
	if err := noQuery(r); err != nil {
		return err
	}
	res, err := a.Links.Get(r.Context(), auth.FromContext(r.Context()).WorkspaceID, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

// updateLink answers PATCH /api/v1/links/{id}: re-point, retitle, pause or
// resume, change the expiry.
func (a *API) updateLink(w http.ResponseWriter, r *http.Request) error {
	id, err := linkID(r)
	if err != nil {
		return err
	}
	if err := noQuery(r); err != nil {
		return err
	}
	f, err := decodeObject(w, r)
	if err != nil {
		return err
	}
	f.rejectUnknown("target_url", "title", "status", "expires_at")
	in := link.UpdateInput{
		TargetURL: f.str("target_url", false),
		Title:     f.nullableStr("title"),
		Status:    f.str("status", false),
		ExpiresAt: f.nullableTime("expires_at"),
	}
	if err := f.err(in.Validate(time.Now())); err != nil {
		return err
	}
	res, err := a.Links.Update(r.Context(), auth.FromContext(r.Context()).WorkspaceID, id, in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

// deleteLink answers DELETE /api/v1/links/{id}.
func (a *API) deleteLink(w http.ResponseWriter, r *http.Request) error {
	id, err := linkID(r)
	if err != nil {
		return err
	}
	if err := noQuery(r); err != nil {
		return err
	}
	if err := a.Links.Delete(r.Context(), auth.FromContext(r.Context()).WorkspaceID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
