package account

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/account/internal/accountdb"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/membership"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/validate"
)

// ErrLastAdmin refuses to remove or demote a workspace's only admin: a
// workspace nobody can administer could never be repaired from the UI.
var ErrLastAdmin = errors.New("a workspace needs at least one admin")

// ParseRole accepts "admin" and "member".
func ParseRole(s string) (Role, bool) { return scope.ParseRole(s) }

// Member is one membership of a workspace.
type Member struct {
	UserID   uuid.UUID
	Email    string
	Role     Role
	JoinedAt time.Time
}

// ExternalUserID is the member's "usr_…" identifier.
func (m Member) ExternalUserID() string { return id.Format(id.User, m.UserID) }

// Members lists a workspace's members, oldest first. Callers have checked
// that the viewer belongs to the workspace.
func (s *Service) Members(ctx context.Context, workspaceID uuid.UUID) ([]Member, error) {
	rows, err := accountdb.New().MembershipListByWorkspace(ctx, s.db.Conn(ctx), workspaceID)
	if err != nil {
		return nil, store.InterpretError(err)
	}
	out := make([]Member, len(rows))
	for i, r := range rows {
		out[i] = Member{UserID: r.UserID, Email: r.Email, Role: Role(r.Role), JoinedAt: r.CreatedAt}
	}
	return out, nil
}

// SetRole changes a member's role and returns the member as changed.
// Demoting the last admin is ErrLastAdmin; a user who is not a member is
// id.ErrNotFound.
func (s *Service) SetRole(ctx context.Context, workspaceID, userID uuid.UUID, role Role) (Member, error) {
	if _, ok := ParseRole(string(role)); !ok {
		var errs validate.Errors
		errs.Add("/role", "must be admin or member")
		return Member{}, errs
	}
	return s.changeMembership(ctx, workspaceID, userID, func(q *accountdb.Queries, tx pgx.Tx, m *Member) error {
		if m.Role == role {
			return nil
		}
		if role != RoleAdmin {
			if err := ensureAnotherAdmin(ctx, q, tx, workspaceID); err != nil {
				return err
			}
		}
		if _, err := q.MembershipSetRole(ctx, tx, accountdb.MembershipSetRoleParams{WorkspaceID: workspaceID, UserID: userID, Role: string(role)}); err != nil {
			return store.InterpretError(err)
		}
		if m.Role == RoleAdmin {
			// A demoted admin's open invitations go with their role.
			if err := s.revokeInvitationsBy(ctx, q, tx, workspaceID, userID); err != nil {
				return err
			}
		}
		if err := audit.Record(ctx, tx, workspaceID, audit.MemberRoleChanged, memberTarget(userID), audit.Changes{
			"role": audit.Change(string(m.Role), string(role)),
		}); err != nil {
			return err
		}
		m.Role = role
		return nil
	})
}

// RemoveMember takes a user out of the workspace and revokes the API keys
// and OAuth clients they created for it and the partner grants they gave
// for it, in one transaction: someone who left must not keep
// acting for the workspace, and a failure leaves both the membership and the
// keys as they were. It returns who it was and how many keys were revoked.
// Removing the last admin is ErrLastAdmin; a user who is not a member is
// id.ErrNotFound.
func (s *Service) RemoveMember(ctx context.Context, workspaceID, userID uuid.UUID) (Member, int, error) {
	var revoked, oauthRevoked []string
	m, err := s.changeMembership(ctx, workspaceID, userID, func(q *accountdb.Queries, tx pgx.Tx, m *Member) error {
		var err error
		if revoked, err = apikey.RevokeAllByCreator(ctx, tx, workspaceID, userID); err != nil {
			return err
		}
		if oauthRevoked, err = oauth.RevokeAllOfMember(ctx, tx, workspaceID, userID); err != nil {
			return err
		}
		if m.Role == RoleAdmin {
			if err := ensureAnotherAdmin(ctx, q, tx, workspaceID); err != nil {
				return err
			}
		}
		if err := s.revokeInvitationsBy(ctx, q, tx, workspaceID, userID); err != nil {
			return err
		}
		if err := q.MembershipDelete(ctx, tx, accountdb.MembershipDeleteParams{WorkspaceID: workspaceID, UserID: userID}); err != nil {
			return store.InterpretError(err)
		}
		return audit.Record(ctx, tx, workspaceID, audit.MemberRemoved, memberTarget(userID), audit.Changes{
			"email": audit.Change(m.Email, nil), "role": audit.Change(string(m.Role), nil),
			"api_keys_revoked": audit.Change(nil, len(revoked)),
		})
	})
	if err != nil {
		return Member{}, 0, err
	}
	if len(revoked) > 0 {
		store.AfterCommit(ctx, func() { s.keysRevoked(revoked...) })
	}
	if len(oauthRevoked) > 0 {
		store.AfterCommit(ctx, func() { s.oauthRevoked(oauthRevoked...) })
	}
	return m, len(revoked), nil
}

// changeMembership runs change on the locked membership, with the
// workspace row locked first so that concurrent changes of its admins are
// serialised and the last-admin rule cannot be raced. The change is
// published (membership.Changed), so the member's credentials act with
// the new role from the next request on every instance.
func (s *Service) changeMembership(ctx context.Context, workspaceID, userID uuid.UUID, change func(*accountdb.Queries, pgx.Tx, *Member) error) (Member, error) {
	var m Member
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := accountdb.New()
		if _, err := q.WorkspaceLock(ctx, tx, workspaceID); err != nil {
			return store.InterpretError(err)
		}
		row, err := q.MembershipGetForUpdate(ctx, tx, accountdb.MembershipGetForUpdateParams{WorkspaceID: workspaceID, UserID: userID})
		if err != nil {
			return store.InterpretError(err)
		}
		user, err := q.UserGetByID(ctx, tx, userID)
		if err != nil {
			return store.InterpretError(err)
		}
		m = Member{UserID: userID, Email: user.Email, Role: Role(row.Role), JoinedAt: row.CreatedAt}
		if err := change(q, tx, &m); err != nil {
			return err
		}
		return membership.Changed(ctx, tx, workspaceID, userID)
	})
	if err != nil {
		return Member{}, err
	}
	s.roles.Drop(ctx, workspaceID, userID)
	return m, nil
}

func ensureAnotherAdmin(ctx context.Context, q *accountdb.Queries, tx pgx.Tx, workspaceID uuid.UUID) error {
	n, err := q.MembershipCountAdmins(ctx, tx, workspaceID)
	if err != nil {
		return store.InterpretError(err)
	}
	if n <= 1 {
		return ErrLastAdmin
	}
	return nil
}

// memberTarget is a member as an audit entry names it: by user id.
func memberTarget(userID uuid.UUID) audit.Target {
	return audit.TargetOf("member", id.User, userID)
}
