package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/store"
)

// membersRemove takes a member out of the workspace and revokes the API
// keys they created for it: someone who left must not keep acting for the
// workspace. Removing the last admin is refused with a message.
func (u *UI) membersRemove(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	ws, _ := workspaceFrom(r.Context())
	userID, ok := store.ParseID(store.PrefixUser, chi.URLParam(r, "user"))
	if !ok {
		u.notFound(w, r)
		return
	}
	m, err := u.Accounts.RemoveMember(r.Context(), ws.ID, userID)
	switch {
	case errors.Is(err, account.ErrLastAdmin):
		u.redirectFlash(w, r, membersPath(ws), flashError, lastAdmin)
		return
	case errors.Is(err, store.ErrNotFound):
		u.notFound(w, r)
		return
	case err != nil:
		u.serverError(w, r, err)
		return
	}
	revoked, err := u.revokeKeysOf(r, ws, userID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	msg := m.Email + " was removed from " + ws.Name + "."
	if revoked > 0 {
		msg += " " + strconv.Itoa(revoked) + " API key(s) they created were revoked."
	}
	if userID == v.User.ID {
		u.redirectFlash(w, r, "/", flashOK, "You left "+ws.Name+".")
		return
	}
	u.redirectFlash(w, r, membersPath(ws), flashOK, msg)
}

// revokeKeysOf revokes every active key userID created in the workspace.
func (u *UI) revokeKeysOf(r *http.Request, ws account.Workspace, userID uuid.UUID) (int, error) {
	keys, err := u.Keys.List(r.Context(), ws.ID, &userID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, k := range keys {
		if err := u.Keys.Revoke(r.Context(), ws.ID, k.ID, nil); err != nil && !errors.Is(err, store.ErrNotFound) {
			return n, err
		}
		n++
	}
	return n, nil
}
