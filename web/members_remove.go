package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/id"
)

// membersRemove takes a member out of the workspace; the account service
// revokes the API keys they created for it in the same transaction.
// Removing the last admin is refused with a message.
func (u *UI) membersRemove(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	ws, _ := workspaceFrom(r.Context())
	userID, ok := id.Parse(id.User, chi.URLParam(r, "user"))
	if !ok {
		u.notFound(w, r)
		return
	}
	if members, err := u.Accounts.Members(r.Context(), ws.ID); err == nil {
		for _, m := range members {
			if m.UserID != userID {
				continue
			}
			c := ConfirmView{Title: "Remove this member?", Button: "Remove member", Back: membersPath(ws),
				Message: "Remove " + m.Email + " from " + ws.Name + "? The API keys they created for this workspace will be revoked."}
			if userID == v.User.ID {
				c.Title, c.Button, c.Message = "Leave this workspace?", "Leave workspace", "Leave "+ws.Name+"? You will lose access to it."
			}
			if !u.confirmFirst(w, r, sectionMembers, c) {
				return
			}
		}
	}
	m, revoked, err := u.Accounts.RemoveMember(r.Context(), ws.ID, userID)
	if errors.Is(err, account.ErrLastAdmin) {
		u.redirectFlash(w, r, membersPath(ws), flashError, lastAdmin)
		return
	}
	if u.failed(w, r, err) {
		return
	}
	if userID == v.User.ID {
		u.redirectFlash(w, r, "/", flashOK, "You left "+ws.Name+"."+keysRevoked(revoked, "you"))
		return
	}
	u.redirectFlash(w, r, membersPath(ws), flashOK, m.Email+" was removed from "+ws.Name+"."+keysRevoked(revoked, "they"))
}

// keysRevoked is the sentence about a removed member's keys, "" for none.
func keysRevoked(n int, who string) string {
	if n == 0 {
		return ""
	}
	return " " + strconv.Itoa(n) + " API key(s) " + who + " created were revoked."
}
