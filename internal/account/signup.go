package account

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/store/dbsqlc"
	"github.com/linkqr/linkqr/internal/validate"
)

// Sign-up throttling: every sign-up with valid input costs an argon2id run
// and may create an account, so attempts (successful or not) are limited per
// client IP over a sliding window.
const (
	SignUpWindow    = 15 * time.Minute
	MaxSignUpsPerIP = 10
)

// SignUpInput is the sign-up form: a new user and the name of their first
// workspace. Field pointers are /email, /password and /workspace.
type SignUpInput struct {
	Email, Password, Workspace string
}

// SignUp registers an address: when it has no account yet, it creates the
// user and their first workspace, with them as its admin, in one
// transaction. When the address already has an account, it changes nothing
// at all — not the password, not the workspaces — and still returns nil.
//
// That is deliberate: linkqr sends no e-mail, so it cannot tell the owner of
// an address "you already have an account" privately, and telling the
// person at the form would let anyone find out who uses linkqr. So the
// answer to valid input is the same either way (nil; the UI then asks the
// person to sign in), and so is its cost: the password is hashed with
// argon2id before the address is looked at, whether or not the hash is
// stored. Callers must not sign the person in on nil — they cannot know
// whether the password they were given is the account's.
//
// Errors: validate.Errors for bad input (which says nothing about
// existing accounts), *ThrottledError once MaxSignUpsPerIP attempts came
// from ip within SignUpWindow (ip may be the zero Addr: then no per-IP
// limit), and secrethash.ErrBusy when the process-wide argon2id cap is
// reached (the attempt is then not counted).
func (s *Service) SignUp(ctx context.Context, in SignUpInput, ip netip.Addr) error {
	var errs validate.Errors
	email := NormalizeEmail("/email", in.Email, &errs)
	CheckPassword("/password", in.Password, &errs)
	name := NormalizeWorkspaceName("/workspace", in.Workspace, &errs)
	if err := errs.Err(); err != nil {
		return err
	}
	forgive, err := s.countSignUp(ctx, ip)
	if err != nil {
		return err
	}
	hash, err := HashPassword(ctx, in.Password)
	if err != nil {
		return forgive(err)
	}
	return s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := dbsqlc.New()
		row, err := q.UserCreateIfAbsent(ctx, tx, dbsqlc.UserCreateIfAbsentParams{ID: store.NewID(), Email: email, PasswordHash: hash})
		if errors.Is(store.InterpretError(err), store.ErrNotFound) {
			return nil // the address has an account: leave it alone
		}
		if err != nil {
			return store.InterpretError(err)
		}
		_, err = createWorkspace(ctx, q, tx, row.ID, name)
		return err
	})
}

// countSignUp records a sign-up attempt from ip and refuses it with
// *ThrottledError when the window already holds MaxSignUpsPerIP. forgive
// removes the record again (when the attempt could not be carried out) and
// returns the error it is given.
func (s *Service) countSignUp(ctx context.Context, ip netip.Addr) (forgive func(error) error, err error) {
	if !ip.IsValid() {
		return func(err error) error { return err }, nil
	}
	ip = ip.Unmap()
	q := dbsqlc.New()
	now := s.now().Truncate(time.Microsecond) // PostgreSQL's precision
	since := now.Add(-SignUpWindow)
	if err := q.SignupAttemptPrune(ctx, s.db.Conn(ctx), since); err != nil {
		return nil, store.InterpretError(err)
	}
	attempt, err := q.SignupAttemptInsert(ctx, s.db.Conn(ctx), dbsqlc.SignupAttemptInsertParams{IP: ip, AttemptedAt: now})
	if err != nil {
		return nil, store.InterpretError(err)
	}
	forgive = func(err error) error {
		ctx := context.WithoutCancel(ctx)
		if derr := q.SignupAttemptDelete(ctx, s.db.Conn(ctx), attempt); derr != nil && err == nil {
			return store.InterpretError(derr)
		}
		return err
	}
	byIP, err := q.SignupAttemptsByIP(ctx, s.db.Conn(ctx), dbsqlc.SignupAttemptsByIPParams{Since: since, IP: ip})
	if err != nil {
		return nil, forgive(store.InterpretError(err))
	}
	if int(byIP.Attempts) > MaxSignUpsPerIP {
		if err := forgive(nil); err != nil {
			return nil, err
		}
		return nil, &ThrottledError{RetryAfter: max(byIP.Oldest.Add(SignUpWindow).Sub(now), time.Second)}
	}
	return forgive, nil
}
