package account

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/account/internal/accountdb"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/store"
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
// transaction, and returns the user (the UI signs them in). When the address
// already has an account, nothing changes — not the password, not the
// workspaces — and the answer is ErrAccountExists; with e-mail on, the
// address's owner is told that someone tried to sign up with it.
//
// That answer tells whoever fills in the form that the address has an
// account. It is the price of signing new users in at once, and it is
// bounded: every attempt, new address or not, counts against the per-IP
// throttle (MaxSignUpsPerIP in SignUpWindow), so testing addresses costs the
// same as signing up, and both cases cost the same argon2id run (the
// password is hashed before the address is looked at).
//
// Errors: validate.Errors for bad input, ErrAccountExists, *ThrottledError
// once MaxSignUpsPerIP attempts came from ip within SignUpWindow (ip may be
// the zero Addr: then no per-IP limit), and secrethash.ErrBusy when the
// process-wide argon2id cap is reached (the attempt is then not counted).
func (s *Service) SignUp(ctx context.Context, in SignUpInput, ip netip.Addr) (User, error) {
	var errs validate.Errors
	email := NormalizeEmail("/email", in.Email, &errs)
	CheckPassword("/password", in.Password, &errs)
	name := NormalizeWorkspaceName("/workspace", in.Workspace, &errs)
	if err := errs.Err(); err != nil {
		return User{}, err
	}
	return s.register(ctx, email, in.Password, ip, func(q *accountdb.Queries, tx pgx.Tx, user User) error {
		_, err := createWorkspace(ctx, q, tx, user.ID, name)
		return err
	})
}

// register creates the user (throttled, hashed first) and runs then in the
// same transaction; an address with an account is ErrAccountExists, after
// the notice to its owner.
func (s *Service) register(ctx context.Context, email, password string, ip netip.Addr, then func(*accountdb.Queries, pgx.Tx, User) error) (User, error) {
	forgive, err := s.countSignUp(ctx, ip)
	if err != nil {
		return User{}, err
	}
	hash, err := HashPassword(ctx, password)
	if err != nil {
		return User{}, forgive(err)
	}
	var user User
	err = s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := accountdb.New()
		row, err := q.UserCreateIfAbsent(ctx, tx, accountdb.UserCreateIfAbsentParams{ID: id.New(), Email: email, PasswordHash: hash})
		if errors.Is(store.InterpretError(err), id.ErrNotFound) {
			return ErrAccountExists // leave the account alone
		}
		if err != nil {
			return store.InterpretError(err)
		}
		user = userFromRow(row)
		return then(q, tx, user)
	})
	if errors.Is(err, ErrAccountExists) {
		// Tell the address's owner, in a transaction of its own (the
		// sign-up's rolled back).
		if nerr := s.db.InTx(ctx, func(tx pgx.Tx) error {
			_, err := s.notify(ctx, tx, Notice{Kind: NoticeSignUpAttempt, To: email, Link: s.baseURL + "/password/forgot"})
			return err
		}); nerr != nil {
			return User{}, nerr
		}
	}
	return user, err
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
	q := accountdb.New()
	now := s.now().Truncate(time.Microsecond) // PostgreSQL's precision
	since := now.Add(-SignUpWindow)
	if err := q.SignupAttemptPrune(ctx, s.db.Conn(ctx), since); err != nil {
		return nil, store.InterpretError(err)
	}
	attempt, err := q.SignupAttemptInsert(ctx, s.db.Conn(ctx), accountdb.SignupAttemptInsertParams{IP: ip, AttemptedAt: now})
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
	byIP, err := q.SignupAttemptsByIP(ctx, s.db.Conn(ctx), accountdb.SignupAttemptsByIPParams{Since: since, IP: ip})
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
