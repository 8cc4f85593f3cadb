package account

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/store/dbsqlc"
	"github.com/linkqr/linkqr/internal/validate"
)

// Sign-in throttling: failures are counted over a sliding window per e-mail
// address (against guessing one account's password from many addresses)
// and per client IP (against trying many accounts from one address).
const (
	SignInWindow        = 15 * time.Minute
	MaxFailuresPerEmail = 5
	MaxFailuresPerIP    = 20
)

// ErrBadCredentials is the one answer for an unknown address and a wrong
// password alike, so sign-in does not reveal who has an account.
var ErrBadCredentials = errors.New("incorrect e-mail address or password")

// ThrottledError refuses a sign-in attempt, whatever the password, because
// too many attempts failed recently.
type ThrottledError struct {
	RetryAfter time.Duration // until the next attempt may be made
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("too many failed sign-in attempts; retry after %s", e.RetryAfter)
}

// User is a person who can sign in.
type User struct {
	ID        uuid.UUID
	Email     string
	CreatedAt time.Time
}

// ExternalID is the user's "usr_…" identifier.
func (u User) ExternalID() string { return store.FormatID(store.PrefixUser, u.ID) }

func userFromRow(r dbsqlc.User) User { return User{ID: r.ID, Email: r.Email, CreatedAt: r.CreatedAt} }

// dummyHash is compared against when the address is unknown, so that an
// unknown address costs the same argon2id work as a wrong password and
// response times do not reveal which addresses have accounts.
var dummyHash = sync.OnceValue(func() string {
	h, err := HashPassword("linkqr dummy password for timing")
	if err != nil {
		panic(err)
	}
	return h
})

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
// both cases), and *ThrottledError — before looking at the password at all —
// once MaxFailuresPerEmail failures for the address or MaxFailuresPerIP
// from ip happened within SignInWindow. ip may be the zero Addr.
//
// The attempt is recorded as a failure before the password is checked and
// forgiven when it succeeds (or is throttled), so concurrent attempts on
// any number of instances count each other and cannot slip past the limit.
func (s *Service) SignIn(ctx context.Context, email, password string, ip netip.Addr) (User, error) {
	if validate.Text(strings.TrimSpace(email)) != nil {
		return User{}, ErrBadCredentials // no account has such an address, and PostgreSQL could not even compare it
	}
	q := dbsqlc.New()
	key := emailKey(email)
	now := s.now().Truncate(time.Microsecond) // PostgreSQL's precision
	since := now.Add(-SignInWindow)
	var ipp *netip.Addr
	if ip.IsValid() {
		ip = ip.Unmap()
		ipp = &ip
	}
	if err := q.SigninFailurePrune(ctx, s.db.Conn(ctx), since); err != nil {
		return User{}, store.InterpretError(err)
	}
	attempt, err := q.SigninFailureInsert(ctx, s.db.Conn(ctx), dbsqlc.SigninFailureInsertParams{EmailKey: key, IP: ipp, FailedAt: now})
	if err != nil {
		return User{}, store.InterpretError(err)
	}
	if wait, err := s.throttled(ctx, key, ipp, since, now); err != nil || wait > 0 {
		if derr := q.SigninFailureDelete(ctx, s.db.Conn(ctx), attempt); derr != nil && err == nil {
			err = store.InterpretError(derr)
		}
		if err != nil {
			return User{}, err
		}
		return User{}, &ThrottledError{RetryAfter: wait}
	}

	if len(password) > MaxPasswordLen {
		password = password[:MaxPasswordLen]
	}
	row, err := q.UserGetByEmail(ctx, s.db.Conn(ctx), strings.TrimSpace(email))
	if errors.Is(store.InterpretError(err), store.ErrNotFound) {
		_, _ = secrethash.Compare(password, dummyHash())
		return User{}, ErrBadCredentials
	}
	if err != nil {
		return User{}, store.InterpretError(err)
	}
	ok, err := secrethash.Compare(password, row.PasswordHash)
	if err != nil {
		return User{}, fmt.Errorf("verify password: %w", err)
	}
	if !ok {
		return User{}, ErrBadCredentials
	}
	if err := q.SigninFailureClearEmail(ctx, s.db.Conn(ctx), key); err != nil {
		return User{}, store.InterpretError(err)
	}
	return userFromRow(row), nil
}

// throttled returns how long to wait when the failures in the window
// (this attempt included) exceed a limit, else 0.
func (s *Service) throttled(ctx context.Context, key string, ip *netip.Addr, since, now time.Time) (time.Duration, error) {
	q := dbsqlc.New()
	var wait time.Duration
	byEmail, err := q.SigninFailuresByEmail(ctx, s.db.Conn(ctx), dbsqlc.SigninFailuresByEmailParams{Since: since, EmailKey: key})
	if err != nil {
		return 0, store.InterpretError(err)
	}
	if byEmail.Failures > MaxFailuresPerEmail {
		wait = max(wait, byEmail.Oldest.Add(SignInWindow).Sub(now))
	}
	if ip != nil {
		byIP, err := q.SigninFailuresByIP(ctx, s.db.Conn(ctx), dbsqlc.SigninFailuresByIPParams{Since: since, IP: ip})
		if err != nil {
			return 0, store.InterpretError(err)
		}
		if byIP.Failures > MaxFailuresPerIP {
			wait = max(wait, byIP.Oldest.Add(SignInWindow).Sub(now))
		}
	}
	if wait > 0 {
		wait = max(wait, time.Second)
	}
	return wait, nil
}

// User returns a user by id (store.ErrNotFound when deleted).
func (s *Service) User(ctx context.Context, id uuid.UUID) (User, error) {
	row, err := dbsqlc.New().UserGetByID(ctx, s.db.Conn(ctx), id)
	if err != nil {
		return User{}, store.InterpretError(err)
	}
	return userFromRow(row), nil
}
