package api

import (
	"bytes"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/cursor"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/validate"
)

// memberJSON is the member object: one membership of the workspace.
type memberJSON struct {
	Object   string    `json:"object"`
	UserID   string    `json:"user_id"`
	Email    string    `json:"email"`
	Role     string    `json:"role"`
	JoinedAt time.Time `json:"joined_at"`
}

func memberWire(m account.Member) memberJSON {
	return memberJSON{Object: "member", UserID: m.ExternalUserID(), Email: m.Email, Role: string(m.Role), JoinedAt: m.JoinedAt.UTC()}
}

// inviterJSON names who made an invitation.
type inviterJSON struct {
	UserID string `json:"user_id"`
	Email  string `json:"email"`
}

// invitationJSON is the invitation object. AcceptURL is set only in the
// answer of POST /invitations, the one time the link is shown.
type invitationJSON struct {
	Object    string       `json:"object"`
	ID        string       `json:"id"`
	Email     string       `json:"email"`
	Role      string       `json:"role"`
	InvitedBy *inviterJSON `json:"invited_by"`
	CreatedAt time.Time    `json:"created_at"`
	ExpiresAt time.Time    `json:"expires_at"`
	AcceptURL string       `json:"accept_url,omitempty"`
}

func invitationWire(inv account.Invitation) invitationJSON {
	out := invitationJSON{Object: "invitation", ID: inv.ExternalID(), Email: inv.Email, Role: string(inv.Role),
		CreatedAt: inv.CreatedAt.UTC(), ExpiresAt: inv.ExpiresAt.UTC()}
	// The inviter's account may be gone (the link then names nobody), and
	// an operator's credential has no user at all.
	if inviter := inv.InviterID(); inviter != nil && inv.InvitedBy != "" {
		out.InvitedBy = &inviterJSON{UserID: id.Format(id.User, *inviter), Email: inv.InvitedBy}
	}
	return out
}

// listMembers answers GET /api/v1/members: the workspace's members, the
// newest first, paged like every list. A workspace has few members, so the
// page is cut from the whole list (one indexed query).
func (a *API) listMembers(w http.ResponseWriter, r *http.Request) error {
	pg, err := parsePageOf(r, cursor.DecodePosition)
	if err != nil {
		return err
	}
	members, err := a.Accounts.Members(r.Context(), auth.FromContext(r.Context()).WorkspaceID)
	if err != nil {
		return err
	}
	at := func(m account.Member) cursor.Position { return cursor.Position{At: m.JoinedAt, ID: m.UserID} }
	items, hasMore := pageOf(members, at, pg)
	return writeJSON(w, http.StatusOK, newListAfter(items, hasMore, memberWire, func(m account.Member) string {
		return cursor.EncodePosition(at(m))
	}))
}

// updateMember answers PATCH /api/v1/members/{usr_…}: {"role"} promotes or
// demotes; the workspace's last admin cannot be demoted (409).
func (a *API) updateMember(w http.ResponseWriter, r *http.Request) error {
	userID, err := bareID(r, id.User)
	if err != nil {
		return err
	}
	f, err := decodeObject(w, r)
	if err != nil {
		return err
	}
	f.rejectUnknown("role")
	role := parseOptional(f, "role", f.str("role", true), parseRole)
	ws := auth.FromContext(r.Context()).WorkspaceID
	if err := f.errs.Err(); err != nil {
		// Who is not a member is 404 whatever the body, as for every id
		// (an id of another workspace is unknown here).
		known, lookupErr := a.isMember(r, ws, userID)
		switch {
		case lookupErr != nil:
			return lookupErr
		case !known:
			return id.ErrNotFound
		}
		return err
	}
	m, err := a.Accounts.SetRole(r.Context(), ws, userID, role.Value)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, memberWire(m))
}

// isMember reports whether the user belongs to the workspace.
func (a *API) isMember(r *http.Request, workspaceID, userID uuid.UUID) (bool, error) {
	members, err := a.Accounts.Members(r.Context(), workspaceID)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(members, func(m account.Member) bool { return m.UserID == userID }), nil
}

// deleteMember answers DELETE /api/v1/members/{usr_…}: the member leaves
// the workspace and the API keys, OAuth clients and grants they made for
// it are revoked in the same transaction; the last admin stays (409).
func (a *API) deleteMember(w http.ResponseWriter, r *http.Request) error {
	userID, err := bareID(r, id.User)
	if err != nil {
		return err
	}
	if _, _, err := a.Accounts.RemoveMember(r.Context(), auth.FromContext(r.Context()).WorkspaceID, userID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listInvitations answers GET /api/v1/invitations: the open invitations,
// newest first, without their links (shown only when made). A workspace
// has at most account.MaxPendingInvitations of them.
func (a *API) listInvitations(w http.ResponseWriter, r *http.Request) error {
	pg, err := parsePageOf(r, cursor.DecodePosition)
	if err != nil {
		return err
	}
	pending, err := a.Accounts.PendingInvitations(r.Context(), auth.FromContext(r.Context()).WorkspaceID)
	if err != nil {
		return err
	}
	at := func(inv account.Invitation) cursor.Position { return cursor.Position{At: inv.CreatedAt, ID: inv.ID} }
	items, hasMore := pageOf(pending, at, pg)
	return writeJSON(w, http.StatusOK, newListAfter(items, hasMore, invitationWire, func(inv account.Invitation) string {
		return cursor.EncodePosition(at(inv))
	}))
}

// createInvitation answers POST /api/v1/invitations: the invitation, with
// its accept link this once (and e-mailed when e-mail is on), made by the
// same account.Service.Invite as the members page's form. The inviter is
// the credential's owner; an operator's credential has none.
func (a *API) createInvitation(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	f, err := decodeObject(w, r)
	if err != nil {
		return err
	}
	f.rejectUnknown("email", "role")
	email := f.str("email", true)
	role := parseOptional(f, "role", f.str("role", true), parseRole)
	if err := f.errs.Err(); err != nil {
		return err
	}
	p := auth.FromContext(r.Context())
	inv, err := a.Accounts.Invite(r.Context(), p.WorkspaceID, p.UserID, email.Value, role.Value)
	if err != nil {
		return err
	}
	out := invitationWire(inv)
	out.AcceptURL = inv.Link
	w.Header().Set("Location", a.BaseURL+"/api/v1/invitations/"+out.ID)
	return writeJSON(w, http.StatusCreated, out)
}

// deleteInvitation answers DELETE /api/v1/invitations/{inv_…}: the
// invitation can no longer be accepted. One that is not open any more
// (accepted, declined, revoked, expired) is 404 like an unknown one.
func (a *API) deleteInvitation(w http.ResponseWriter, r *http.Request) error {
	invID, err := bareID(r, id.Invitation)
	if err != nil {
		return err
	}
	if _, err := a.Accounts.RevokeInvitation(r.Context(), auth.FromContext(r.Context()).WorkspaceID, invID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// parseRole accepts the roles "admin" and "member".
func parseRole(s string) (account.Role, error) {
	role, ok := account.ParseRole(s)
	if !ok {
		return "", validate.Reject("must be admin or member")
	}
	return role, nil
}

// pageOf cuts one page from items held in memory, ordered newest first by
// at (time, then id, both descending): the items after pg's cursor, at
// most pg.limit of them, and whether more follow.
func pageOf[T any](items []T, at func(T) cursor.Position, pg page[cursor.Position]) ([]T, bool) {
	items = slices.Clone(items)
	slices.SortFunc(items, func(x, y T) int { return comparePosition(at(y), at(x)) })
	start := 0
	if pg.before != nil {
		start = len(items)
		for i, it := range items {
			if comparePosition(at(it), *pg.before) < 0 {
				start = i
				break
			}
		}
	}
	items = items[start:]
	if len(items) > pg.limit {
		return items[:pg.limit], true
	}
	return items, false
}

// comparePosition orders positions by time to the microsecond (what a
// cursor keeps), then by id.
func comparePosition(x, y cursor.Position) int {
	if c := x.At.Truncate(time.Microsecond).Compare(y.At.Truncate(time.Microsecond)); c != 0 {
		return c
	}
	return bytes.Compare(x.ID[:], y.ID[:])
}
