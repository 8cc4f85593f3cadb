package api

import (
	"encoding/json"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/sso"
)

// getSSO answers GET /api/v1/sso: the workspace's connection (404 when
// there is none). The client secret is never returned.
func (a *API) getSSO(w http.ResponseWriter, r *http.Request) error {
	c, err := a.SSO.Get(r.Context(), auth.FromContext(r.Context()).WorkspaceID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, c.Wire())
}

// putSSO answers PUT /api/v1/sso: the whole connection (client_secret
// may be left out to keep the stored one). The issuer is discovered now.
func (a *API) putSSO(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	f, err := decodeObject(w, r)
	if err != nil {
		return err
	}
	f.rejectUnknown("issuer", "client_id", "client_secret", "default_role", "required", "domains")
	in := sso.PutInput{
		Issuer:       f.str("issuer", true).Value,
		ClientID:     f.str("client_id", true).Value,
		ClientSecret: f.str("client_secret", false).Value,
		DefaultRole:  scope.Role(f.str("default_role", false).Value),
		Domains:      f.strList("domains", false).Value,
	}
	if f.has("required") {
		if err := json.Unmarshal(f.m["required"], &in.Required); err != nil || f.isNull("required") {
			f.errs.Add(f.ptr("required"), "must be true or false")
		}
	}
	if err := f.errs.Err(); err != nil {
		return err
	}
	c, err := a.SSO.Put(r.Context(), auth.FromContext(r.Context()).WorkspaceID, in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, c.Wire())
}

// verifySSODomain answers POST /api/v1/sso/domains/{domain}/verify: the
// TXT record is looked up now; 200 with the connection, 422
// domain-not-verified saying what was found, 409 when another workspace
// holds the domain verified.
func (a *API) verifySSODomain(w http.ResponseWriter, r *http.Request) error {
	if err := emptyBody(w, r); err != nil {
		return err
	}
	c, err := a.SSO.VerifyDomain(r.Context(), auth.FromContext(r.Context()).WorkspaceID, chi.URLParam(r, "domain"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, c.Wire())
}
