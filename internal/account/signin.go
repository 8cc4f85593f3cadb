package account

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/account/internal/accountdb"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/store"
)

// Sign-in throttling keeps guessing expensive without handing attackers a
// way to lock owners out. Failures are counted over sliding windows:
//
//   - per (address, client IP): MaxFailuresPerEmailIP in SignInWindow. This
//     is what stops guessing one account's password from one place, and it
//     does not touch the owner signing in from anywhere else;
//   - per client IP: MaxFailuresPerIP in SignInWindow, against trying many
//     accounts (or spraying one) from one place;
//   - per address, from anywhere: MaxFailuresPerEmail in EmailBackstopWindow,
//     a higher and slower backstop against guessing from many places. Only
//     an attacker with several IPs can reach it; then the account is paused
//     for everyone until the oldest failure is an hour old.
//
// A success forgives only the failures of the same (address, IP): the
// owner's typos, not an attacker's attempts.
const (
	SignInWindow          = 15 * time.Minute
	MaxFailuresPerEmailIP = 5
	MaxFailuresPerIP      = 20
	EmailBackstopWindow   = time.Hour
	MaxFailuresPerEmail   = 50
)

// ErrBadCredentials is the one answer for an unknown address and a wrong
// password alike, so sign-in does not reveal who has an account.
var ErrBadCredentials = errors.New("incorrect e-mail address or password")

// ThrottledError refuses a sign-in or sign-up attempt, whatever its input,
// because too many attempts were made recently.
type ThrottledError struct {
	RetryAfter time.Duration // until the next attempt may be made
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("too many attempts; retry after %s", e.RetryAfter)
}

// User is a person who can sign in.
type User struct {
	ID        uuid.UUID
	Email     string
	CreatedAt time.Time
}

// ExternalID is the user's "usr_…" identifier.
func (u User) ExternalID() string { return id.Format(id.User, u.ID) }

func userFromRow(r accountdb.User) User {
	return User{ID: r.ID, Email: r.Email, CreatedAt: r.CreatedAt}
}

// emailKey is how failures are counted: trimmed, lower-case, bounded.
func emailKey(email string) string {
	k := strings.ToLower(strings.TrimSpace(email))
	if len(k) > 254 {
		k = k[:254]
	}
	return k
}

// SignIn checks an address and password. It returns ErrBadCredentials for
// an unknown address or a wrong password (after the same argon2id work in
// both cases), *ThrottledError — before looking at the password at all —
// once a limit (see MaxFailuresPerEmailIP) is exceeded, and
// secrethash.ErrBusy when the process-wide argon2id cap is reached. ip may be
// the zero Addr (then the per-IP limit does not apply).
//
// The attempt is recorded as a failure before the password is checked and
// forgiven when it succeeds, is throttled or could not be checked, so
// concurrent attempts on any number of instances count each other and
// cannot slip past the limits.
func (s *Service) SignIn(ctx context.Context, email, password string, ip netip.Addr) (User, error) {
	if _, err := EmailRule.Parse(email); err != nil {
		return User{}, ErrBadCredentials // no account has such an address, and PostgreSQL could not even compare it
	}
	if len(password) > MaxPasswordLen {
		password = password[:MaxPasswordLen]
	}
	var user User
	err := s.guarded(ctx, email, ip, func() (bool, error) {
		row, err := accountdb.New().UserGetByEmail(ctx, s.db.Conn(ctx), strings.TrimSpace(email))
		if errors.Is(store.InterpretError(err), id.ErrNotFound) {
			if err := secrethash.Dummy(ctx, password); err != nil {
				return false, err
			}
			return false, nil
		}
		if err != nil {
			return false, store.InterpretError(err)
		}
		ok, err := secrethash.Compare(ctx, uuid.Nil, password, row.PasswordHash)
		if err != nil { // ErrBusy, ctx's error or a damaged hash: nothing was checked
			return false, fmt.Errorf("verify password: %w", err)
		}
		user = userFromRow(row)
		return ok, nil
	})
	if err != nil {
		return User{}, err
	}
	return user, nil
}

// CheckSecondFactor counts a second-factor code (an authenticator code, a
// recovery code) of the address exactly like a password guess: the same
// windows, limits and *ThrottledError, checked before the code is, so
// codes cannot be guessed faster than passwords. check reports whether the
// code is right; a wrong one is ErrBadCredentials.
func (s *Service) CheckSecondFactor(ctx context.Context, email string, ip netip.Addr, check func() (bool, error)) error {
	return s.guarded(ctx, email, ip, check)
}

// guarded runs check as one sign-in attempt of the address. The attempt
// is recorded as a failure before check runs and forgiven when check could
// not decide (an error) or the attempt is throttled, so concurrent
// attempts on any number of instances count each other and cannot slip
// past the limits; a success forgives the failures of the same (address,
// IP).
func (s *Service) guarded(ctx context.Context, email string, ip netip.Addr, check func() (bool, error)) error {
	q := accountdb.New()
	key := emailKey(email)
	now := s.now().Truncate(time.Microsecond) // PostgreSQL's precision
	var ipp *netip.Addr
	if ip.IsValid() {
		ip = ip.Unmap()
		ipp = &ip
	}
	if err := q.SigninFailurePrune(ctx, s.db.Conn(ctx), now.Add(-max(SignInWindow, EmailBackstopWindow))); err != nil {
		return store.InterpretError(err)
	}
	attempt, err := q.SigninFailureInsert(ctx, s.db.Conn(ctx), accountdb.SigninFailureInsertParams{EmailKey: key, IP: ipp, FailedAt: now})
	if err != nil {
		return store.InterpretError(err)
	}
	// forgive removes this attempt again; it runs even when ctx has ended.
	forgive := func(err error) error {
		ctx := context.WithoutCancel(ctx)
		if derr := q.SigninFailureDelete(ctx, s.db.Conn(ctx), attempt); derr != nil && err == nil {
			return store.InterpretError(derr)
		}
		return err
	}
	if wait, err := s.throttled(ctx, key, ipp, now); err != nil || wait > 0 {
		if err := forgive(err); err != nil {
			return err
		}
		return &ThrottledError{RetryAfter: wait}
	}
	ok, err := check()
	if err != nil {
		return forgive(err)
	}
	if !ok {
		return ErrBadCredentials
	}
	if err := q.SigninFailureClearEmailIP(ctx, s.db.Conn(ctx), accountdb.SigninFailureClearEmailIPParams{EmailKey: key, IP: ipp}); err != nil {
		return store.InterpretError(err)
	}
	return nil
}

// throttled returns how long to wait when the failures in a window (this
// attempt included) exceed its limit, else 0.
func (s *Service) throttled(ctx context.Context, key string, ip *netip.Addr, now time.Time) (time.Duration, error) {
	q := accountdb.New()
	var wait time.Duration
	over := func(failures int32, oldest time.Time, limit int, window time.Duration) {
		if int(failures) > limit {
			wait = max(wait, oldest.Add(window).Sub(now))
		}
	}
	since := now.Add(-SignInWindow)
	pair, err := q.SigninFailuresByEmailIP(ctx, s.db.Conn(ctx), accountdb.SigninFailuresByEmailIPParams{Since: since, EmailKey: key, IP: ip})
	if err != nil {
		return 0, store.InterpretError(err)
	}
	over(pair.Failures, pair.Oldest, MaxFailuresPerEmailIP, SignInWindow)
	if ip != nil {
		byIP, err := q.SigninFailuresByIP(ctx, s.db.Conn(ctx), accountdb.SigninFailuresByIPParams{Since: since, IP: ip})
		if err != nil {
			return 0, store.InterpretError(err)
		}
		over(byIP.Failures, byIP.Oldest, MaxFailuresPerIP, SignInWindow)
	}
	byEmail, err := q.SigninFailuresByEmail(ctx, s.db.Conn(ctx), accountdb.SigninFailuresByEmailParams{Since: now.Add(-EmailBackstopWindow), EmailKey: key})
	if err != nil {
		return 0, store.InterpretError(err)
	}
	over(byEmail.Failures, byEmail.Oldest, MaxFailuresPerEmail, EmailBackstopWindow)
	if wait > 0 {
		wait = max(wait, time.Second)
	}
	return wait, nil
}

// User returns a user by id (id.ErrNotFound when deleted).
func (s *Service) User(ctx context.Context, id uuid.UUID) (User, error) {
	row, err := accountdb.New().UserGetByID(ctx, s.db.Conn(ctx), id)
	if err != nil {
		return User{}, store.InterpretError(err)
	}
	return userFromRow(row), nil
}

// UserByEmail returns the account of an address (any case);
// id.ErrNotFound when there is none.
func (s *Service) UserByEmail(ctx context.Context, email string) (User, error) {
	row, err := accountdb.New().UserGetByEmail(ctx, s.db.Conn(ctx), strings.TrimSpace(email))
	if err != nil {
		return User{}, store.InterpretError(err)
	}
	return userFromRow(row), nil
}
