package account

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/account/internal/accountdb"
	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/membership"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/validate"
)

// InvitationTTL is how long an invitation can be accepted: long enough for
// a holiday, short enough that a forgotten one does not linger.
const InvitationTTL = 14 * 24 * time.Hour

// MaxPendingInvitations bounds a workspace's open invitations, so an admin
// cannot flood arbitrary addresses with them.
const MaxPendingInvitations = 100

// Invitation statuses, as stored.
const (
	invitationAccepted = "accepted"
	invitationDeclined = "declined"
)

// Invitation is an open offer of a membership, addressed to an e-mail
// address. Nobody joins a workspace without accepting one: the address may
// not even have an account yet, and the admin is told the same either way.
type Invitation struct {
	ID            uuid.UUID
	WorkspaceID   uuid.UUID
	WorkspaceName string
	Email         string // lower-cased
	Role          Role
	InvitedBy     string // the inviting admin's address; "" once their account is gone
	CreatedAt     time.Time
	ExpiresAt     time.Time
	// Link is the accept link {base}/invitations/{token}: set only on the
	// Invitation that Invite returns, the one time it is shown.
	Link string
	// Mailed reports that the link was also queued as an e-mail to the
	// invitee (e-mail is on).
	Mailed bool
	// Status is the stored state: pending, accepted, declined, revoked.
	Status string

	inviterID  *uuid.UUID // the inviting admin; nil once their account is gone, or for an operator's
	byOperator bool       // sent with an operator's credential: no inviter to check
}

// InviterID is the inviting admin: nil once their account is gone, and
// for an invitation sent with an operator's credential.
func (i Invitation) InviterID() *uuid.UUID { return i.inviterID }

// ExternalID is the invitation's "inv_…" identifier.
func (i Invitation) ExternalID() string { return id.Format(id.Invitation, i.ID) }

// ExternalWorkspaceID is the invited workspace's "ws_…" identifier.
func (i Invitation) ExternalWorkspaceID() string {
	return id.Format(id.Workspace, i.WorkspaceID)
}

// Invite invites the address to the workspace with role, on behalf of the
// admin invitedBy (nil: an operator's credential, which acts as an admin).
// The role is no higher than the inviter's, and the inviter must be
// allowed to manage members (scope.MembersWrite) now, in the transaction:
// otherwise ErrForbidden. Whether the address has an account makes no difference,
// so inviting reveals nothing about who uses linkqr. Inviting an address
// that already has an open invitation replaces it (new role, new expiry).
// A bad address or role, an address that already belongs to the workspace,
// and a workspace at MaxPendingInvitations are validate.Errors on /email or
// /role.
func (s *Service) Invite(ctx context.Context, workspaceID uuid.UUID, invitedBy *uuid.UUID, email string, role Role) (Invitation, error) {
	var errs validate.Errors
	email = strings.ToLower(NormalizeEmail("/email", email, &errs))
	if _, ok := ParseRole(string(role)); !ok {
		errs.Add("/role", "must be admin or member")
	}
	if err := errs.Err(); err != nil {
		return Invitation{}, err
	}
	now := s.now()
	var inv Invitation
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := accountdb.New()
		// Serialises invitations of the workspace with its membership
		// changes, so the checks below hold until commit.
		ws, err := q.WorkspaceLock(ctx, tx, workspaceID)
		if err != nil {
			return store.InterpretError(err)
		}
		inviterRole := RoleAdmin
		if invitedBy != nil {
			if inviterRole, err = membership.RoleInTx(ctx, tx, ws, *invitedBy); err != nil {
				return err
			}
		}
		if err := inviterRole.Check(scope.MembersWrite); err != nil {
			return err
		}
		if role == RoleAdmin && inviterRole != RoleAdmin {
			errs.Add("/role", "cannot be higher than your own role ("+string(inviterRole)+")")
			return errs
		}
		member, err := q.MembershipExistsByEmail(ctx, tx, accountdb.MembershipExistsByEmailParams{WorkspaceID: ws, Email: email})
		if err != nil {
			return store.InterpretError(err)
		}
		if member {
			errs.Add("/email", "is already a member of this workspace")
			return errs
		}
		if err := q.InvitationReplacePending(ctx, tx, accountdb.InvitationReplacePendingParams{WorkspaceID: ws, Email: email, Now: now}); err != nil {
			return store.InterpretError(err)
		}
		open, err := q.InvitationCountPending(ctx, tx, accountdb.InvitationCountPendingParams{WorkspaceID: ws, Now: now})
		if err != nil {
			return store.InterpretError(err)
		}
		if open >= MaxPendingInvitations {
			errs.Add("/email", "cannot be invited: this workspace already has "+strconv.Itoa(MaxPendingInvitations)+" open invitations; revoke some first")
			return errs
		}
		row, err := q.InvitationCreate(ctx, tx, accountdb.InvitationCreateParams{
			ID: id.New(), WorkspaceID: ws, Email: email, Role: string(role),
			InvitedBy: invitedBy, CreatedAt: now, ExpiresAt: now.Add(InvitationTTL), ByOperator: invitedBy == nil,
		})
		if err != nil {
			return store.InterpretError(err)
		}
		wsRow, err := q.WorkspaceGetByID(ctx, tx, ws)
		if err != nil {
			return store.InterpretError(err)
		}
		inv = invitationFromRow(row, wsRow.Name, nil)
		token, hash := newToken()
		if err := q.InvitationSetToken(ctx, tx, accountdb.InvitationSetTokenParams{ID: inv.ID, TokenHash: hash}); err != nil {
			return store.InterpretError(err)
		}
		inv.Link = s.baseURL + "/invitations/" + token
		if invitedBy != nil {
			inviter, err := q.UserGetByID(ctx, tx, *invitedBy)
			if err != nil {
				return store.InterpretError(err)
			}
			inv.InvitedBy = inviter.Email
		}
		if err := audit.Record(ctx, tx, ws, audit.MemberInvited, audit.TargetOf("invitation", id.Invitation, inv.ID), audit.Changes{
			"email": audit.Change(nil, email), "role": audit.Change(nil, string(role)),
		}); err != nil {
			return err
		}
		inv.Mailed, err = s.notify(ctx, tx, Notice{Kind: NoticeInvitation, To: email, Link: inv.Link,
			Workspace: wsRow.Name, InvitedBy: inv.InvitedBy, Role: inv.Role, Expires: inv.ExpiresAt})
		return err
	})
	return inv, err
}

// PendingInvitations lists the workspace's open invitations, newest first.
// Callers have checked that the viewer administers the workspace.
func (s *Service) PendingInvitations(ctx context.Context, workspaceID uuid.UUID) ([]Invitation, error) {
	rows, err := accountdb.New().InvitationListPendingByWorkspace(ctx, s.db.Conn(ctx),
		accountdb.InvitationListPendingByWorkspaceParams{WorkspaceID: workspaceID, Now: s.now()})
	if err != nil {
		return nil, store.InterpretError(err)
	}
	out := make([]Invitation, len(rows))
	for i, r := range rows {
		out[i] = invitationFromRow(accountdb.Invitation{ID: r.ID, WorkspaceID: r.WorkspaceID, Email: r.Email, Role: r.Role,
			InvitedBy: r.InvitedBy, ByOperator: r.ByOperator, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}, r.WorkspaceName, r.InvitedByEmail)
	}
	return out, nil
}

// RevokeInvitation withdraws an open invitation of the workspace and
// returns it. Another workspace's invitation, and one that is no longer
// open (accepted, declined, revoked, expired), are id.ErrNotFound.
func (s *Service) RevokeInvitation(ctx context.Context, workspaceID, invitationID uuid.UUID) (Invitation, error) {
	var row accountdb.Invitation
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		row, err = accountdb.New().InvitationRevoke(ctx, tx,
			accountdb.InvitationRevokeParams{ID: invitationID, WorkspaceID: workspaceID, Now: s.now()})
		if err != nil {
			return store.InterpretError(err)
		}
		return audit.Record(ctx, tx, workspaceID, audit.InvitationRevoked, audit.TargetOf("invitation", id.Invitation, row.ID), audit.Changes{
			"email": audit.Change(row.Email, nil), "role": audit.Change(row.Role, nil),
		})
	})
	if err != nil {
		return Invitation{}, err
	}
	return invitationFromRow(row, "", nil), nil
}

// InvitationsFor lists the open invitations addressed to the user's
// address, newest first: what they may accept or decline.
func (s *Service) InvitationsFor(ctx context.Context, userID uuid.UUID) ([]Invitation, error) {
	rows, err := accountdb.New().InvitationListPendingForUser(ctx, s.db.Conn(ctx),
		accountdb.InvitationListPendingForUserParams{UserID: userID, Now: s.now()})
	if err != nil {
		return nil, store.InterpretError(err)
	}
	out := make([]Invitation, len(rows))
	for i, r := range rows {
		out[i] = invitationFromRow(accountdb.Invitation{ID: r.ID, WorkspaceID: r.WorkspaceID, Email: r.Email, Role: r.Role,
			InvitedBy: r.InvitedBy, ByOperator: r.ByOperator, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}, r.WorkspaceName, r.InvitedByEmail)
	}
	return out, nil
}

// CountInvitationsFor is how many open invitations await the user (the
// top bar shows it on every page, so it is one cheap query).
func (s *Service) CountInvitationsFor(ctx context.Context, userID uuid.UUID) (int, error) {
	n, err := accountdb.New().InvitationCountPendingForUser(ctx, s.db.Conn(ctx),
		accountdb.InvitationCountPendingForUserParams{UserID: userID, Now: s.now()})
	return int(n), store.InterpretError(err)
}

// AcceptInvitation makes the user a member of the invitation's workspace
// with the invited role and returns the workspace as they now see it. An
// invitation that is not addressed to the user's address, or is no longer
// open, is id.ErrNotFound, exactly like an unknown id. A user who already
// belongs keeps their role.
func (s *Service) AcceptInvitation(ctx context.Context, userID, invitationID uuid.UUID) (Workspace, error) {
	var ws Workspace
	err := s.closeInvitation(ctx, userID, invitationID, invitationAccepted, func(q *accountdb.Queries, tx pgx.Tx, inv Invitation) error {
		if err := s.addMember(ctx, q, tx, inv, userID); err != nil {
			return err
		}
		row, err := q.WorkspaceGetForUser(ctx, tx, accountdb.WorkspaceGetForUserParams{ID: inv.WorkspaceID, UserID: userID})
		if err != nil {
			return store.InterpretError(err)
		}
		ws = Workspace{ID: row.ID, Name: row.Name, Role: Role(row.Role), CreatedAt: row.CreatedAt}
		return nil
	})
	if err == nil {
		s.roles.Drop(ctx, ws.ID, userID)
	}
	return ws, err
}

// DeclineInvitation turns an open invitation addressed to the user down
// and returns it; otherwise it is id.ErrNotFound, as for AcceptInvitation.
func (s *Service) DeclineInvitation(ctx context.Context, userID, invitationID uuid.UUID) (Invitation, error) {
	var declined Invitation
	err := s.closeInvitation(ctx, userID, invitationID, invitationDeclined, func(_ *accountdb.Queries, _ pgx.Tx, inv Invitation) error {
		declined = inv
		return nil
	})
	return declined, err
}

// closeInvitation locks the user's open invitation, runs then and marks
// the invitation with status, in one transaction: an invitation is answered
// once, even when two tabs answer it at the same moment.
func (s *Service) closeInvitation(ctx context.Context, userID, invitationID uuid.UUID, status string, then func(*accountdb.Queries, pgx.Tx, Invitation) error) error {
	now := s.now()
	return s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := accountdb.New()
		row, err := q.InvitationGetPendingForUserForUpdate(ctx, tx, accountdb.InvitationGetPendingForUserForUpdateParams{ID: invitationID, UserID: userID, Now: now})
		if err != nil {
			return store.InterpretError(err)
		}
		inv := invitationFromRow(accountdb.Invitation{ID: row.ID, WorkspaceID: row.WorkspaceID, Email: row.Email, Role: row.Role,
			CreatedAt: row.CreatedAt, ExpiresAt: row.ExpiresAt, InvitedBy: row.InvitedBy, ByOperator: row.ByOperator}, row.WorkspaceName, nil)
		if err := then(q, tx, inv); err != nil {
			return err
		}
		return store.InterpretError(q.InvitationClose(ctx, tx, accountdb.InvitationCloseParams{ID: invitationID, Status: status, Now: now}))
	})
}

func invitationFromRow(r accountdb.Invitation, workspaceName string, invitedBy *string) Invitation {
	inv := Invitation{
		ID: r.ID, WorkspaceID: r.WorkspaceID, WorkspaceName: workspaceName, Email: r.Email, Role: Role(r.Role),
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, Status: r.Status,
		inviterID: r.InvitedBy, byOperator: r.ByOperator,
	}
	if invitedBy != nil {
		inv.InvitedBy = *invitedBy
	}
	return inv
}

// inviterStillAdmin refuses (as a revoked link, 410) an invitation whose
// inviter is no longer an admin of the workspace: demoting or removing an
// admin, or deleting their account, revokes what they offered. Demotion
// and removal also close those invitations (revokeInvitationsBy); this
// check holds even for one that slipped past.
func inviterStillAdmin(ctx context.Context, q *accountdb.Queries, tx accountdb.DBTX, inv Invitation) error {
	if inv.byOperator {
		return nil
	}
	if inv.inviterID == nil {
		return &GoneError{State: LinkRevoked}
	}
	ok, err := q.InvitationInviterIsAdmin(ctx, tx, accountdb.InvitationInviterIsAdminParams{WorkspaceID: inv.WorkspaceID, UserID: *inv.inviterID})
	if err != nil {
		return store.InterpretError(err)
	}
	if !ok {
		return &GoneError{State: LinkRevoked}
	}
	return nil
}

// revokeInvitationsBy closes, in tx, the open invitations userID made in
// the workspace (they stopped being an admin there).
func (s *Service) revokeInvitationsBy(ctx context.Context, q *accountdb.Queries, tx pgx.Tx, workspaceID, userID uuid.UUID) error {
	_, err := q.InvitationRevokeAllByInviter(ctx, tx, accountdb.InvitationRevokeAllByInviterParams{WorkspaceID: workspaceID, InvitedBy: &userID, Now: s.now()})
	return store.InterpretError(err)
}
