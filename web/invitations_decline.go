package web

import (
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/store"
)

// invitationsDecline turns down an invitation addressed to the viewer;
// any other is a 404.
func (u *UI) invitationsDecline(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	id, ok := store.ParseID(store.PrefixInvitation, chi.URLParam(r, "invitation"))
	if !ok {
		u.invitationGone(w, r)
		return
	}
	inv, err := u.Accounts.DeclineInvitation(r.Context(), v.User.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		u.invitationGone(w, r)
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.redirectFlash(w, r, invitationsPath, flashOK, "You declined the invitation to join "+inv.WorkspaceName+".")
}
