package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/session"
)

// membersList shows the workspace's members to every member (and the
// admins' tools to admins).
func (u *UI) membersList(w http.ResponseWriter, r *http.Request) {
	u.renderMembers(w, r, http.StatusOK, MembersView{})
}

// renderMembers renders the members page and the open invitations around
// view's invite form (empty, or filled in again after a failed invite).
func (u *UI) renderMembers(w http.ResponseWriter, r *http.Request, status int, view MembersView) {
	v, _ := viewerFrom(r.Context())
	ws, _ := workspaceFrom(r.Context())
	members, err := u.Accounts.Members(r.Context(), ws.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	var invitations []account.Invitation
	if ws.IsAdmin() {
		if invitations, err = u.Accounts.PendingInvitations(r.Context(), ws.ID); err != nil {
			u.serverError(w, r, err)
			return
		}
	}
	for _, inv := range invitations {
		view.Invitations = append(view.Invitations, PendingInvitationRow{
			ID: inv.ExternalID(), Email: inv.Email, Role: string(inv.Role), InvitedBy: inv.InvitedBy,
			SentAt: formatDate(inv.CreatedAt), ExpiresAt: formatDate(inv.ExpiresAt),
		})
	}
	admins := 0
	for _, m := range members {
		if m.Role == account.RoleAdmin {
			admins++
		}
	}
	for _, m := range members {
		view.Members = append(view.Members, MemberRow{
			UserID: m.ExternalUserID(), Email: m.Email, Role: string(m.Role),
			JoinedAt: formatDate(m.JoinedAt), IsViewer: m.UserID == v.User.ID,
			SoleAdmin: m.Role == account.RoleAdmin && admins == 1,
		})
	}
	if inv, ok := session.PopNewInvitation(v.Session); ok && inv.WorkspaceID == ws.ExternalID() {
		view.NewInvitation = &NewInvitationView{Email: inv.Email, Role: inv.Role, Link: inv.Link, Expires: inv.Expires, Mailed: inv.Mailed}
		if !u.save(w, r, v.Session) {
			return
		}
	}
	view.MailEnabled = u.Accounts.MailEnabled()
	view.Nav = u.nav(w, r, sectionMembers)
	Render(w, r, status, MembersPage(view))
}

// membersPath is the members page of the current workspace.
func membersPath(ws account.Workspace) string {
	return "/w/" + ws.ExternalID() + "/settings/members"
}

// invitationLifetime says how long an invitation stays open: "14 days".
func invitationLifetime() string {
	return strconv.Itoa(int(account.InvitationTTL/(24*time.Hour))) + " days"
}
