package account

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/account/internal/accountdb"
	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/validate"
)

// ConfirmPassword checks a signed-in user's password before something
// irreversible (deleting the account): a wrong or missing one is a
// validate.Errors on pointer; secrethash.ErrBusy when argon2id is saturated.
func (s *Service) ConfirmPassword(ctx context.Context, userID uuid.UUID, pointer, password string) error {
	var errs validate.Errors
	if password == "" {
		errs.Add(pointer, "is required")
		return errs
	}
	if ok, err := s.passwordMatches(ctx, userID, password); err != nil || ok {
		return err
	}
	errs.Add(pointer, "is incorrect")
	return errs
}

// passwordMatches compares password with the user's (argon2id, constant time).
func (s *Service) passwordMatches(ctx context.Context, userID uuid.UUID, password string) (bool, error) {
	row, err := accountdb.New().UserGetByID(ctx, s.db.Conn(ctx), userID)
	if err != nil {
		return false, store.InterpretError(err)
	}
	return secrethash.Compare(ctx, uuid.Nil, password, row.PasswordHash)
}

// ChangePassword sets a new password for a signed-in user who proves the
// current one. A wrong current password is a validate.Errors on /current
// (the person is signed in: there is no account to hide), a bad new one on
// /password; secrethash.ErrBusy when argon2id is saturated. The caller ends
// the user's other sessions.
func (s *Service) ChangePassword(ctx context.Context, userID uuid.UUID, current, password string) error {
	var errs validate.Errors
	CheckPassword("/password", password, &errs)
	if current == "" {
		errs.Add("/current", "is required")
	}
	if err := errs.Err(); err != nil {
		return err
	}
	ok, err := s.passwordMatches(ctx, userID, current)
	if err != nil {
		return err
	}
	if !ok {
		errs.Add("/current", "is incorrect")
		return errs
	}
	hash, err := HashPassword(ctx, password)
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx pgx.Tx) error {
		_, err := s.setPassword(ctx, tx, userID, hash)
		return err
	})
}

// RenameWorkspace renames a workspace (1–100 characters, validate.Errors on
// /name). Callers have checked that the viewer administers it.
func (s *Service) RenameWorkspace(ctx context.Context, workspaceID uuid.UUID, name string) (Workspace, error) {
	var errs validate.Errors
	name = NormalizeWorkspaceName("/name", name, &errs)
	if err := errs.Err(); err != nil {
		return Workspace{}, err
	}
	var row accountdb.Workspace
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := accountdb.New()
		old, err := q.WorkspaceGetByID(ctx, tx, workspaceID)
		if err != nil {
			return store.InterpretError(err)
		}
		if row, err = q.WorkspaceRename(ctx, tx, accountdb.WorkspaceRenameParams{ID: workspaceID, Name: name}); err != nil {
			return store.InterpretError(err)
		}
		if old.Name == row.Name {
			return nil
		}
		return audit.Record(ctx, tx, workspaceID, audit.WorkspaceRenamed, audit.TargetOf("workspace", id.Workspace, workspaceID), audit.Changes{
			"name": audit.Change(old.Name, row.Name),
		})
	})
	if err != nil {
		return Workspace{}, err
	}
	return Workspace{ID: row.ID, Name: row.Name, CreatedAt: row.CreatedAt, Timezone: zoneOf(row.Timezone)}, nil
}
