// Package account owns users, workspaces and memberships: who a person is,
// which workspaces they belong to and in which role. Everything tenant-owned
// in linkqr hangs off a workspace, and a user reaches a workspace only through
// a membership row.
package account

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/account/internal/accountdb"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/membership"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/text"
	"github.com/linkqr/linkqr/internal/validate"
)

// Role is a member's role in a workspace; what each may do is the role
// table of internal/scope.
type Role = scope.Role

// The two roles: admins manage members, webhooks and OAuth clients.
const (
	RoleAdmin  = scope.RoleAdmin
	RoleMember = scope.RoleMember
)

// Password length bounds: long enough to resist guessing, short enough that
// argon2id input stays bounded.
const (
	MinPasswordLen = 10
	MaxPasswordLen = 256
)

// ErrPasswordMismatch means a user exists but the password given is not theirs.
var ErrPasswordMismatch = errors.New("password does not match")

// Service implements account operations.
type Service struct {
	db    *store.DB
	roles *membership.Roles // this instance's role cache; nil in operator commands
	clock clock
	// keysRevoked is called after a commit that revoked API keys
	// (removing a member), with their public ids, so this instance's key
	// cache drops them at once; other instances learn through
	// apikey.RevokedChannel.
	keysRevoked func(publicIDs ...string)
	// oauthRevoked is the same for the OAuth clients and grants that
	// removing a member revokes (oauth.Service.Invalidate).
	oauthRevoked func(payloads ...string)

	baseURL string      // LINKQR_BASE_URL, which links in messages start with
	mail    Mailer      // nil: no e-mail
	jobs    JobInserter // queues forgot-password lookups; nil without e-mail
}

// NewService returns a Service over db. baseURL is LINKQR_BASE_URL, which
// links in messages start with. roles, keysRevoked and oauthRevoked are
// this process's caches that a membership change must reach at once, after
// its commit (nil in operator commands, which cache nothing: serving
// instances hear of the change through PostgreSQL). They are arguments,
// not fields set later, so a composition root that forgets one does not
// compile.
func NewService(db *store.DB, baseURL string, roles *membership.Roles, keysRevoked, oauthRevoked func(ids ...string)) *Service {
	none := func(...string) {}
	if keysRevoked == nil {
		keysRevoked = none
	}
	if oauthRevoked == nil {
		oauthRevoked = none
	}
	return &Service{db: db, baseURL: baseURL, roles: roles, keysRevoked: keysRevoked, oauthRevoked: oauthRevoked}
}

// EmailRule is an e-mail address as text: trimmed, storable, at most 254
// characters (SMTP's bound is 254 bytes; NormalizeEmail checks those).
var EmailRule = text.Rule{Max: 254, Trim: true}

// WorkspaceNameRule is a workspace's name: 1 to 100 characters, trimmed.
var WorkspaceNameRule = text.Rule{Min: 1, Max: 100, Trim: true}

// NormalizeEmail validates an address and returns it trimmed; the pointer is
// used for the field error.
func NormalizeEmail(pointer, email string, errs *validate.Errors) string {
	t, err := EmailRule.Parse(email)
	if !errs.Check(pointer, err) {
		return strings.TrimSpace(email)
	}
	email = t.String()
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Address != email || len(email) > 254 {
		errs.Add(pointer, "must be an e-mail address like name@example.com")
	}
	return email
}

// CheckPassword validates a new password's length.
func CheckPassword(pointer, password string, errs *validate.Errors) {
	n := utf8.RuneCountInString(password)
	if n < MinPasswordLen || len(password) > MaxPasswordLen {
		errs.Add(pointer, fmt.Sprintf("must be %d to %d characters long", MinPasswordLen, MaxPasswordLen))
	}
}

// NormalizeWorkspaceName validates and trims a workspace name.
func NormalizeWorkspaceName(pointer, name string, errs *validate.Errors) string {
	t, err := WorkspaceNameRule.Parse(name)
	if !errs.Check(pointer, err) {
		return strings.TrimSpace(name)
	}
	return t.String()
}

// HashPassword returns an argon2id hash in PHC string form (or
// secrethash.ErrBusy when the process-wide argon2id cap is reached).
func HashPassword(ctx context.Context, password string) (string, error) {
	return secrethash.Hash(ctx, uuid.Nil, password)
}

// BootstrapResult is what `linkqr admin bootstrap` prints.
type BootstrapResult struct {
	UserID      string `json:"user_id"`
	WorkspaceID string `json:"workspace_id"`
}

// BootstrapInput is what `linkqr admin bootstrap` is given.
type BootstrapInput struct {
	Email, Password, Workspace string
}

// Normalize trims and validates the input; field pointers are "/email",
// "/password" and "/workspace". Callers validate before touching the
// database, so bad input changes nothing.
func (in *BootstrapInput) Normalize() error {
	var errs validate.Errors
	in.Email = NormalizeEmail("/email", in.Email, &errs)
	CheckPassword("/password", in.Password, &errs)
	in.Workspace = NormalizeWorkspaceName("/workspace", in.Workspace, &errs)
	return errs.Err()
}

// Bootstrap creates the user if missing and a workspace with them as admin.
// It is idempotent: run again with the same arguments it returns the same
// user and workspace and changes nothing. An existing user's password is
// checked, never overwritten.
func (s *Service) Bootstrap(ctx context.Context, in BootstrapInput) (BootstrapResult, error) {
	if err := in.Normalize(); err != nil {
		return BootstrapResult{}, err
	}
	email, password, workspaceName := in.Email, in.Password, in.Workspace

	var res BootstrapResult
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := accountdb.New()
		// Serialise concurrent bootstraps of the same address.
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext(lower($1)))", email); err != nil {
			return store.InterpretError(err)
		}
		user, err := q.UserGetByEmail(ctx, tx, email)
		switch {
		case errors.Is(store.InterpretError(err), id.ErrNotFound):
			hash, err := HashPassword(ctx, password)
			if err != nil {
				return err
			}
			user, err = q.UserCreate(ctx, tx, accountdb.UserCreateParams{ID: id.New(), Email: email, PasswordHash: hash})
			if err != nil {
				return store.InterpretError(err)
			}
		case err != nil:
			return store.InterpretError(err)
		default:
			ok, err := secrethash.Compare(ctx, uuid.Nil, password, user.PasswordHash)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("user %s exists: %w", email, ErrPasswordMismatch)
			}
		}

		wsID, err := findOrCreateAdminWorkspace(ctx, q, tx, user.ID, workspaceName)
		if err != nil {
			return err
		}
		res = BootstrapResult{
			UserID:      id.Format(id.User, user.ID),
			WorkspaceID: id.Format(id.Workspace, wsID),
		}
		return nil
	})
	return res, err
}

func findOrCreateAdminWorkspace(ctx context.Context, q *accountdb.Queries, tx pgx.Tx, userID uuid.UUID, name string) (uuid.UUID, error) {
	ws, err := q.WorkspaceFindAdminByName(ctx, tx, accountdb.WorkspaceFindAdminByNameParams{UserID: userID, Name: name})
	if err == nil {
		return ws.ID, nil
	}
	if !errors.Is(store.InterpretError(err), id.ErrNotFound) {
		return uuid.UUID{}, store.InterpretError(err)
	}
	return createWorkspace(ctx, q, tx, userID, name)
}

// createWorkspace creates a workspace with userID as its first admin.
func createWorkspace(ctx context.Context, q *accountdb.Queries, tx pgx.Tx, userID uuid.UUID, name string) (uuid.UUID, error) {
	ws, err := q.WorkspaceCreate(ctx, tx, accountdb.WorkspaceCreateParams{ID: id.New(), Name: name})
	if err != nil {
		return uuid.UUID{}, store.InterpretError(err)
	}
	if _, err := q.MembershipCreate(ctx, tx, accountdb.MembershipCreateParams{WorkspaceID: ws.ID, UserID: userID, Role: string(RoleAdmin)}); err != nil {
		return uuid.UUID{}, store.InterpretError(err)
	}
	return ws.ID, nil
}
