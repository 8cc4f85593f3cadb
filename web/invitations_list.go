package web

import (
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/id"
)

// invitationsList shows the signed-in user the open invitations addressed
// to their e-mail address, to accept or decline.
func (u *UI) invitationsList(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	list, err := u.Accounts.InvitationsFor(r.Context(), v.User.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	view := InvitationsView{Nav: u.nav(w, r, sectionInvitations)}
	for _, inv := range list {
		view.Invitations = append(view.Invitations, InvitationCard{
			ID: inv.ExternalID(), WorkspaceName: inv.WorkspaceName, Role: string(inv.Role), InvitedBy: inv.InvitedBy,
			SentAt: formatDate(inv.CreatedAt), ExpiresAt: formatDate(inv.ExpiresAt),
		})
	}
	Render(w, r, http.StatusOK, InvitationsPage(view))
}

// invitationsPath is the invitee's page; it lives under /w/ because every
// other top-level path could be a link's short code.
const invitationsPath = "/w/invitations"

// invitationGone answers an accept or decline of an invitation that is
// unknown, addressed to someone else or no longer open — the same 404 for
// each, so ids reveal nothing.
// invitationAnswered reports whether answering (accept or decline) failed
// and, if so, has written the page: the invitation-specific 404 for one the
// viewer cannot answer, else a server error.
func (u *UI) invitationAnswered(w http.ResponseWriter, r *http.Request, err error) bool {
	switch {
	case errors.Is(err, id.ErrNotFound):
		u.invitationGone(w, r)
	case err != nil:
		u.serverError(w, r, err)
	default:
		return false
	}
	return true
}

// invitationParam is the invitation id of the URL, false when malformed.
func invitationParam(r *http.Request) (uuid.UUID, bool) {
	return id.Parse(id.Invitation, chi.URLParam(r, "invitation"))
}

func (u *UI) invitationGone(w http.ResponseWriter, r *http.Request) {
	u.errorPage(w, r, http.StatusNotFound, "Invitation not found",
		"This invitation does not exist, is addressed to another e-mail address, or is no longer open: it may have expired, been revoked or been answered already.")
}
