package api

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
)

// createDomain answers POST /api/v1/domains: 201 with the pending domain
// and the TXT record that will verify it.
func (a *API) createDomain(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	f, err := decodeObject(w, r)
	if err != nil {
		return err
	}
	f.rejectUnknown("hostname")
	h := parseOptional(f, "hostname", f.str("hostname", true), a.Domains.ParseHostname)
	if err := f.errs.Err(); err != nil {
		return err
	}
	d, err := a.Domains.Create(r.Context(), auth.FromContext(r.Context()).WorkspaceID, h.Value)
	if err != nil {
		return err
	}
	out := a.Domains.Check(r.Context(), d, false).Wire()
	w.Header().Set("Location", a.BaseURL+"/api/v1/domains/"+out.ID)
	return writeJSON(w, http.StatusCreated, out)
}

// listDomains answers GET /api/v1/domains, newest first, each domain with
// its live checks (looked up together).
func (a *API) listDomains(w http.ResponseWriter, r *http.Request) error {
	pg, err := parsePage(r)
	if err != nil {
		return err
	}
	ds, hasMore, err := a.Domains.List(r.Context(), auth.FromContext(r.Context()).WorkspaceID, pg.before, pg.limit)
	if err != nil {
		return err
	}
	checked := a.Domains.CheckAll(r.Context(), ds)
	return writeJSON(w, http.StatusOK, newList(checked, hasMore, domain.Checked.Wire, func(c domain.Checked) uuid.UUID { return c.ID }))
}

// getDomain answers GET /api/v1/domains/{id}, with its live checks.
func (a *API) getDomain(w http.ResponseWriter, r *http.Request) error {
	domainID, err := bareID(r, id.Domain)
	if err != nil {
		return err
	}
	d, err := a.Domains.Get(r.Context(), auth.FromContext(r.Context()).WorkspaceID, domainID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, a.Domains.Check(r.Context(), d, false).Wire())
}

// updateDomain answers PATCH /api/v1/domains/{id}: the root and not-found
// targets (null clears one).
func (a *API) updateDomain(w http.ResponseWriter, r *http.Request) error {
	domainID, err := bareID(r, id.Domain)
	if err != nil {
		return err
	}
	f, err := decodeObject(w, r)
	if err != nil {
		return err
	}
	f.rejectUnknown("root_url", "not_found_url")
	in := domain.UpdateInput{
		RootURL:     parseNullable(f, "root_url", f.nullableStr("root_url"), link.ParseTargetURL),
		NotFoundURL: parseNullable(f, "not_found_url", f.nullableStr("not_found_url"), link.ParseTargetURL),
	}
	if err := f.errs.Err(); err != nil {
		return err
	}
	d, err := a.Domains.Update(r.Context(), auth.FromContext(r.Context()).WorkspaceID, domainID, in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, a.Domains.Check(r.Context(), d, false).Wire())
}

// verifyDomain answers POST /api/v1/domains/{id}/verify: the TXT record
// is looked up now; 200 verified (with checks looked up afresh), or 422
// domain-not-verified saying what the lookup found.
func (a *API) verifyDomain(w http.ResponseWriter, r *http.Request) error {
	domainID, err := bareID(r, id.Domain)
	if err != nil {
		return err
	}
	if err := emptyBody(w, r); err != nil {
		return err
	}
	d, err := a.Domains.Verify(r.Context(), auth.FromContext(r.Context()).WorkspaceID, domainID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, a.Domains.Check(r.Context(), d, false).Wire())
}

// deleteDomain answers DELETE /api/v1/domains/{id}: 204, or 409 while
// links use the domain.
func (a *API) deleteDomain(w http.ResponseWriter, r *http.Request) error {
	domainID, err := bareID(r, id.Domain)
	if err != nil {
		return err
	}
	if err := a.Domains.Delete(r.Context(), auth.FromContext(r.Context()).WorkspaceID, domainID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
