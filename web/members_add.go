package web

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/account"
)

// membersAdd adds an existing user, found by e-mail address. No such user,
// or one who already belongs, is shown next to the address field.
func (u *UI) membersAdd(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	email, role := r.PostFormValue("email"), r.PostFormValue("role")
	m, err := u.Accounts.AddMember(r.Context(), ws.ID, email, account.Role(role))
	if errs, ok := fieldErrors(err); ok {
		u.renderMembers(w, r, http.StatusUnprocessableEntity, MembersView{Email: email, Role: role, Errors: errs})
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.redirectFlash(w, r, membersPath(ws), flashOK, m.Email+" was added as "+article(m.Role)+".")
}

// article reads a role with its article: "an admin", "a member".
func article(role account.Role) string {
	if role == account.RoleAdmin {
		return "an admin"
	}
	return "a member"
}
