package web

import (
	"net/http"
)

// invitationsDecline turns down an invitation addressed to the viewer;
// any other is a 404.
func (u *UI) invitationsDecline(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	id, ok := invitationParam(r)
	if !ok {
		u.invitationGone(w, r)
		return
	}
	inv, err := u.Accounts.DeclineInvitation(r.Context(), v.User.ID, id)
	if u.invitationAnswered(w, r, err) {
		return
	}
	u.redirectFlash(w, r, invitationsPath, flashOK, "You declined the invitation to join "+inv.WorkspaceName+".")
}
