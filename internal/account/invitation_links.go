package account

import (
	"context"
	"net/netip"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/account/internal/accountdb"
	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/membership"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/validate"
)

// InvitationByLink returns the invitation an accept link names, if it can
// still be accepted. A token that names nothing is id.ErrNotFound; one
// that was accepted or declined, revoked (or replaced by a newer link) or
// has expired is a *GoneError saying which, with the invitation.
func (s *Service) InvitationByLink(ctx context.Context, token string) (Invitation, error) {
	hash, ok := parseToken(token)
	if !ok {
		return Invitation{}, id.ErrNotFound
	}
	r, err := accountdb.New().InvitationGetByToken(ctx, s.db.Conn(ctx), hash)
	if err != nil {
		return Invitation{}, store.InterpretError(err)
	}
	inv := invitationFromRow(accountdb.Invitation{ID: r.ID, WorkspaceID: r.WorkspaceID, Email: r.Email, Role: r.Role,
		Status: r.Status, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, InvitedBy: r.InvitedBy, ByOperator: r.ByOperator}, r.WorkspaceName, r.InvitedByEmail)
	if err := invitationGone(inv, s.now()); err != nil {
		return inv, err
	}
	return inv, inviterStillAdmin(ctx, accountdb.New(), s.db.Conn(ctx), inv)
}

func invitationGone(inv Invitation, now time.Time) error {
	state := linkGone(inv.Status == invitationAccepted || inv.Status == invitationDeclined, inv.Status == "revoked", inv.ExpiresAt, now)
	if state != "" {
		return &GoneError{State: state}
	}
	return nil
}

// AcceptInvitationLink makes the user a member of the workspace the link
// invites to, with the invited role, and returns the workspace. The link
// must be open (else *GoneError or id.ErrNotFound) and addressed to the
// user's address (else ErrOtherAddress, and nothing is accepted).
func (s *Service) AcceptInvitationLink(ctx context.Context, userID uuid.UUID, token string) (Workspace, error) {
	var ws Workspace
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		inv, err := s.lockInvitationLink(ctx, tx, token)
		if err != nil {
			return err
		}
		user, err := accountdb.New().UserGetByID(ctx, tx, userID)
		if err != nil {
			return store.InterpretError(err)
		}
		if !strings.EqualFold(user.Email, inv.Email) {
			return ErrOtherAddress
		}
		ws, err = s.join(ctx, tx, userID, inv)
		return err
	})
	if err == nil {
		s.roles.Drop(ctx, ws.ID, userID)
	}
	return ws, err
}

// SignUpInvited creates an account for the address an open invitation link
// is for, with password, and accepts the invitation in the same
// transaction: no workspace of its own is created. The sign-up throttle
// and rules apply; an address that already has an account is
// ErrAccountExists (its owner signs in and accepts).
func (s *Service) SignUpInvited(ctx context.Context, token, password string, ip netip.Addr) (User, Workspace, error) {
	inv, err := s.InvitationByLink(ctx, token)
	if err != nil {
		return User{}, Workspace{}, err
	}
	var errs validate.Errors
	CheckPassword("/password", password, &errs)
	if err := errs.Err(); err != nil {
		return User{}, Workspace{}, err
	}
	var ws Workspace
	user, err := s.register(ctx, inv.Email, password, ip, func(_ *accountdb.Queries, tx pgx.Tx, user User) error {
		locked, err := s.lockInvitationLink(ctx, tx, token)
		if err != nil {
			return err
		}
		ws, err = s.join(ctx, tx, user.ID, locked)
		return err
	})
	if err == nil {
		s.roles.Drop(ctx, ws.ID, user.ID)
	}
	return user, ws, err
}

// lockInvitationLink locks the open invitation a link names.
func (s *Service) lockInvitationLink(ctx context.Context, tx pgx.Tx, token string) (Invitation, error) {
	hash, ok := parseToken(token)
	if !ok {
		return Invitation{}, id.ErrNotFound
	}
	r, err := accountdb.New().InvitationLockByToken(ctx, tx, hash)
	if err != nil {
		return Invitation{}, store.InterpretError(err)
	}
	inv := invitationFromRow(accountdb.Invitation{ID: r.ID, WorkspaceID: r.WorkspaceID, Email: r.Email, Role: r.Role,
		Status: r.Status, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, InvitedBy: r.InvitedBy, ByOperator: r.ByOperator}, r.WorkspaceName, nil)
	if err := invitationGone(inv, s.now()); err != nil {
		return inv, err
	}
	return inv, inviterStillAdmin(ctx, accountdb.New(), tx, inv)
}

// join adds the membership of a locked open invitation and closes it.
func (s *Service) join(ctx context.Context, tx pgx.Tx, userID uuid.UUID, inv Invitation) (Workspace, error) {
	q := accountdb.New()
	if err := s.addMember(ctx, q, tx, inv, userID); err != nil {
		return Workspace{}, err
	}
	if err := q.InvitationClose(ctx, tx, accountdb.InvitationCloseParams{ID: inv.ID, Status: invitationAccepted, Now: s.now()}); err != nil {
		return Workspace{}, store.InterpretError(err)
	}
	row, err := q.WorkspaceGetForUser(ctx, tx, accountdb.WorkspaceGetForUserParams{ID: inv.WorkspaceID, UserID: userID})
	if err != nil {
		return Workspace{}, store.InterpretError(err)
	}
	return Workspace{ID: row.ID, Name: row.Name, Role: Role(row.Role), CreatedAt: row.CreatedAt}, nil
}

// HasOpenInvitation reports whether the user holds an open invitation to
// the workspace.
func (s *Service) HasOpenInvitation(ctx context.Context, userID, workspaceID uuid.UUID) (bool, error) {
	ok, err := accountdb.New().InvitationOpenForWorkspaceExists(ctx, s.db.Conn(ctx),
		accountdb.InvitationOpenForWorkspaceExistsParams{UserID: userID, WorkspaceID: workspaceID, Now: s.now()})
	return ok, store.InterpretError(err)
}

// addMember makes the user a member with the invitation's role (one who
// already belongs keeps theirs), after checking that the inviter still may
// offer it, and publishes the change: a cached "not a member" of this user
// must not outlive the commit (callers Drop it from this instance's cache
// once their transaction has committed).
func (s *Service) addMember(ctx context.Context, q *accountdb.Queries, tx pgx.Tx, inv Invitation, userID uuid.UUID) error {
	if err := inviterStillAdmin(ctx, q, tx, inv); err != nil {
		return err
	}
	n, err := q.MembershipCreateIfAbsent(ctx, tx, accountdb.MembershipCreateIfAbsentParams{
		WorkspaceID: inv.WorkspaceID, UserID: userID, Role: string(inv.Role),
	})
	if err != nil {
		return store.InterpretError(err)
	}
	if n > 0 {
		// member.joined, as the joining user's own change.
		if err := audit.Record(audit.OnBehalfOf(ctx, userID), tx, inv.WorkspaceID, audit.MemberJoined, memberTarget(userID), audit.Changes{
			"role": audit.Change(nil, string(inv.Role)), "invitation_id": audit.Change(nil, inv.ExternalID()),
		}); err != nil {
			return err
		}
	}
	return membership.Changed(ctx, tx, inv.WorkspaceID, userID)
}
