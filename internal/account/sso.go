package account

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/account/internal/accountdb"
	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/membership"
	"github.com/linkqr/linkqr/internal/store"
)

// JoinBySSO is the account behind a sign-in through a workspace's
// identity provider, which has vouched for the address (internal/sso
// checked the ID token, email_verified and that the address is at a domain
// the workspace proved): the existing account of that address, or a new one
// on first sign-in — with a random password nobody knows, so it signs in
// through the provider or after a password reset — made a member of the
// workspace with role when it is not one yet (member.joined, as the user's
// own change).
func (s *Service) JoinBySSO(ctx context.Context, workspaceID uuid.UUID, email string, role Role) (User, bool, error) {
	email = strings.TrimSpace(email)
	q := accountdb.New()
	var hash string
	if _, err := q.UserGetByEmail(ctx, s.db.Conn(ctx), email); errors.Is(store.InterpretError(err), id.ErrNotFound) {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		if hash, err = HashPassword(ctx, base64.RawURLEncoding.EncodeToString(b)); err != nil {
			return User{}, false, err
		}
	} else if err != nil {
		return User{}, false, store.InterpretError(err)
	}
	var user User
	created := false
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		row, err := q.UserGetByEmail(ctx, tx, email)
		if errors.Is(store.InterpretError(err), id.ErrNotFound) && hash != "" {
			row, err = q.UserCreateIfAbsent(ctx, tx, accountdb.UserCreateIfAbsentParams{ID: id.New(), Email: email, PasswordHash: hash})
			created = err == nil
		}
		if err != nil {
			return store.InterpretError(err) // a concurrent first sign-in: the next attempt finds the account
		}
		user = userFromRow(row)
		n, err := q.MembershipCreateIfAbsent(ctx, tx, accountdb.MembershipCreateIfAbsentParams{
			WorkspaceID: workspaceID, UserID: user.ID, Role: string(role),
		})
		if err != nil {
			return store.InterpretError(err)
		}
		if n == 0 {
			return nil
		}
		if err := audit.Record(audit.OnBehalfOf(ctx, user.ID), tx, workspaceID, audit.MemberJoined, memberTarget(user.ID), audit.Changes{
			"role": audit.Change(nil, string(role)), "via": audit.Change(nil, "sso"),
		}); err != nil {
			return err
		}
		return membership.Changed(ctx, tx, workspaceID, user.ID)
	})
	if err != nil {
		return User{}, false, err
	}
	s.roles.Drop(ctx, workspaceID, user.ID)
	return user, created, nil
}
