package web

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/session"
)

// invitationsAccept makes the viewer a member of the invitation's
// workspace and takes them there. Only invitations addressed to the
// viewer's own e-mail address can be accepted; any other is a 404.
func (u *UI) invitationsAccept(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	id, ok := invitationParam(r)
	if !ok {
		u.invitationGone(w, r)
		return
	}
	ws, err := u.Accounts.AcceptInvitation(r.Context(), v.User.ID, id)
	if u.invitationAnswered(w, r, err) {
		return
	}
	session.SetWorkspace(v.Session, ws.ID)
	u.redirectFlash(w, r, "/w/"+ws.ExternalID()+"/links", flashOK, "You joined "+ws.Name+" as "+article(ws.Role)+".")
}
