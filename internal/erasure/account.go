package erasure

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/erasure/internal/erasuredb"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/membership"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/store"
)

// LastAdminError refuses an account deletion that would leave workspaces
// with members but no admin: the user must promote someone (or remove the
// others) first.
type LastAdminError struct{ Workspaces []string }

func (e *LastAdminError) Error() string {
	return "you are the only admin of " + strings.Join(e.Workspaces, ", ") +
		": make another member an admin (Settings → Members) or remove the other members first"
}

// DeleteAccount deletes a user: refused (LastAdminError) while they are
// the only admin of a workspace with other members. Workspaces they are
// the only member of are deleted with the account (as DeleteWorkspace);
// in the others, the keys and OAuth clients they created and the grants
// they gave are revoked, as when a member is removed. The user row goes
// last, and with it (ON DELETE CASCADE) their sessions, memberships and
// reset tokens. Unknown user: id.ErrNotFound.
func (s *Service) DeleteAccount(ctx context.Context, userID uuid.UUID) (deleted []Deleted, err error) {
	var rev Revoked
	err = s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := erasuredb.New()
		// Membership changes lock the workspace: two admins leaving at
		// once cannot both count the other as the remaining admin.
		mine, err := q.ErasureUserWorkspaces(ctx, tx, userID)
		if err != nil {
			return store.InterpretError(err)
		}
		for _, ws := range mine {
			if _, err := q.ErasureWorkspaceLock(ctx, tx, ws); err != nil {
				return store.InterpretError(err)
			}
		}
		sole, err := q.ErasureSoleAdminWorkspaces(ctx, tx, userID)
		if err != nil {
			return store.InterpretError(err)
		}
		var blocked []string
		for _, w := range sole {
			if w.Members > 1 {
				blocked = append(blocked, "“"+w.Name+"”")
			}
		}
		if len(blocked) > 0 {
			return &LastAdminError{Workspaces: blocked}
		}
		for _, w := range sole {
			if _, err := q.ErasureWorkspaceMarkDeleted(ctx, tx, w.ID); err != nil {
				return store.InterpretError(err)
			}
			r, err := s.markedTx(ctx, tx, w.ID)
			if err != nil {
				return err
			}
			rev = merge(rev, r)
			deleted = append(deleted, Deleted{ID: w.ID, Name: w.Name})
		}
		if rev, err = revokeMemberships(ctx, tx, userID, rev); err != nil {
			return err
		}
		n, err := q.ErasureUserDelete(ctx, tx, userID)
		if err != nil {
			return store.InterpretError(err)
		}
		if n == 0 {
			return id.ErrNotFound
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.revoked(rev)
	return deleted, nil
}

// revokeMemberships revokes what the user holds in the workspaces they
// stay a (former) member of: keys, OAuth clients and grants, and the
// invitations they made.
func revokeMemberships(ctx context.Context, tx pgx.Tx, userID uuid.UUID, rev Revoked) (Revoked, error) {
	rows, err := erasuredb.New().ErasureUserWorkspaces(ctx, tx, userID)
	if err != nil {
		return rev, store.InterpretError(err)
	}
	for _, ws := range rows {
		keys, err := apikey.RevokeAllByCreator(ctx, tx, ws, userID)
		if err != nil {
			return rev, err
		}
		payloads, err := oauth.RevokeAllOfMember(ctx, tx, ws, userID)
		if err != nil {
			return rev, err
		}
		// What they offered as an admin goes with them, and every
		// instance forgets their role there.
		if err := erasuredb.New().ErasureInvitationsRevokeByInviter(ctx, tx, erasuredb.ErasureInvitationsRevokeByInviterParams{WorkspaceID: ws, InvitedBy: &userID, Now: time.Now()}); err != nil {
			return rev, store.InterpretError(err)
		}
		if err := membership.Changed(ctx, tx, ws, userID); err != nil {
			return rev, err
		}
		rev = merge(rev, Revoked{KeyIDs: keys, OAuth: payloads})
	}
	return rev, nil
}

func merge(a, b Revoked) Revoked {
	return Revoked{
		Workspaces: append(a.Workspaces, b.Workspaces...),
		KeyIDs:     append(a.KeyIDs, b.KeyIDs...),
		OAuth:      append(a.OAuth, b.OAuth...),
	}
}
