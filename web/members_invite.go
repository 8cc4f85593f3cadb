package web

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/session"
)

// membersInvite invites an e-mail address to the workspace and shows the
// admin its link once (and mails it, with e-mail on). The answer is the
// same whether or not the address has a linkqr account, so inviting
// reveals nothing about who uses linkqr; an address that already belongs
// to the workspace is shown next to the field (the admin sees the members
// anyway).
func (u *UI) membersInvite(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	ws, _ := workspaceFrom(r.Context())
	email, role := r.PostFormValue("email"), r.PostFormValue("role")
	inv, err := u.Accounts.Invite(r.Context(), ws.ID, &v.User.ID, email, account.Role(role))
	if errs, ok := fieldErrors(err); ok {
		u.renderMembers(w, r, http.StatusUnprocessableEntity, MembersView{Email: email, Role: role, Errors: errs})
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	session.SetNewInvitation(v.Session, session.NewInvitation{
		WorkspaceID: ws.ExternalID(), Email: inv.Email, Role: string(inv.Role), Link: inv.Link, Mailed: inv.Mailed,
		Expires: formatTime(inv.ExpiresAt),
	})
	msg := "Invitation link made for " + inv.Email + " to join as " + article(inv.Role) + ": copy it below, it is shown only once."
	if inv.Mailed {
		msg = "Invitation e-mailed to " + inv.Email + " to join as " + article(inv.Role) + "."
	}
	u.redirectFlash(w, r, membersPath(ws), flashOK, msg)
}

// article reads a role with its article: "an admin", "a member".
func article(role account.Role) string {
	if role == account.RoleAdmin {
		return "an admin"
	}
	return "a member"
}
