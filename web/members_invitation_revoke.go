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
	if pending, err := u.Accounts.PendingInvitations(r.Context(), ws.ID); err == nil {
		for _, inv := range pending {
			if inv.ID == id && !u.confirmFirst(w, r, sectionMembers, ConfirmView{
				Title: "Revoke this invitation?", Button: "Revoke invitation", Back: membersPath(ws),
				Message: "Revoke the invitation for " + inv.Email + " to join " + ws.Name + "? They will no longer be able to accept it.",
			}) {
				return
			}
		}
	}
	inv, err := u.Accounts.RevokeInvitation(r.Context(), ws.ID, id)
	if u.failed(w, r, err) {
		return
	}
	u.redirectFlash(w, r, membersPath(ws), flashOK, "The invitation for "+inv.Email+" was revoked.")
}
