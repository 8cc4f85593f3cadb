package web

import (
	"net/http"
)

// membersRevokeInvitation withdraws an open invitation of the workspace.
// Another workspace's invitation, or one no longer open, is a 404.
func (u *UI) membersRevokeInvitation(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	id, ok := invitationParam(r)
	if !ok {
		u.notFound(w, r)
		return
	}
	inv, err := u.Accounts.RevokeInvitation(r.Context(), ws.ID, id)
	if u.failed(w, r, err) {
		return
	}
	u.redirectFlash(w, r, membersPath(ws), flashOK, "The invitation for "+inv.Email+" was revoked.")
}
