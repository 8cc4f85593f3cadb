package account

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/store/dbsqlc"
	"github.com/linkqr/linkqr/internal/validate"
)

// SignUpInput is the sign-up form: a new user and the name of their first
// workspace. Field pointers are /email, /password and /workspace.
type SignUpInput struct {
	Email, Password, Workspace string
}

// SignUp creates a user and their first workspace, with them as its admin,
// in one transaction. Bad input, and an address that already has an
// account, are validate.Errors.
func (s *Service) SignUp(ctx context.Context, in SignUpInput) (User, Workspace, error) {
	var errs validate.Errors
	email := NormalizeEmail("/email", in.Email, &errs)
	CheckPassword("/password", in.Password, &errs)
	name := NormalizeWorkspaceName("/workspace", in.Workspace, &errs)
	if err := errs.Err(); err != nil {
		return User{}, Workspace{}, err
	}
	hash, err := HashPassword(in.Password)
	if err != nil {
		return User{}, Workspace{}, err
	}
	var (
		user User
		ws   Workspace
	)
	err = s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := dbsqlc.New()
		row, err := q.UserCreate(ctx, tx, dbsqlc.UserCreateParams{ID: store.NewID(), Email: email, PasswordHash: hash})
		if err != nil {
			return store.InterpretError(err)
		}
		user = userFromRow(row)
		id, err := createWorkspace(ctx, q, tx, user.ID, name)
		if err != nil {
			return err
		}
		ws = Workspace{ID: id, Name: name, Role: RoleAdmin}
		return nil
	})
	if store.IsConflict(err, "users_email_key") {
		return User{}, Workspace{}, emailTaken()
	}
	if err != nil {
		return User{}, Workspace{}, err
	}
	return user, ws, nil
}

func emailTaken() error {
	var errs validate.Errors
	errs.Add("/email", "already has a linkqr account; sign in instead")
	return errs
}
