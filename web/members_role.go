package web

import (
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/id"
)

// lastAdmin explains why the last admin can be neither demoted nor removed.
const lastAdmin = "A workspace needs at least one admin. Make another member an admin first."

// membersSetRole promotes or demotes a member. Demoting the last admin is
// refused with a message; an admin who demotes themselves lands on a page
// they may still see.
func (u *UI) membersSetRole(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	ws, _ := workspaceFrom(r.Context())
	userID, ok := id.Parse(id.User, chi.URLParam(r, "user"))
	role, validRole := account.ParseRole(r.PostFormValue("role"))
	if !ok {
		u.notFound(w, r)
		return
	}
	if !validRole {
		u.redirectFlash(w, r, membersPath(ws), flashError, "Choose admin or member as the role.")
		return
	}
	m, err := u.Accounts.SetRole(r.Context(), ws.ID, userID, role)
	switch {
	case errors.Is(err, account.ErrLastAdmin):
		u.redirectFlash(w, r, membersPath(ws), flashError, lastAdmin)
	case errors.Is(err, id.ErrNotFound):
		u.notFound(w, r)
	case err != nil:
		u.serverError(w, r, err)
	case userID == v.User.ID && role != account.RoleAdmin:
		u.redirectFlash(w, r, "/w/"+ws.ExternalID()+"/settings/api-keys", flashOK, "You are now a member of "+ws.Name+"; other admins manage its members.")
	default:
		u.redirectFlash(w, r, membersPath(ws), flashOK, m.Email+" is now "+article(m.Role)+".")
	}
}
