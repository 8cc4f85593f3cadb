package account

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/linkqr/linkqr/internal/account/internal/accountdb"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/session"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/validate"
)

// ResetTTL is how long a password reset link works: long enough to open
// one's mail, short enough that an old mailbox holds nothing useful.
const ResetTTL = 60 * time.Minute

// Forgot-password throttling, like sign-in's: per address (so nobody can
// flood an inbox) and per client IP (so nobody can make the server mail
// many addresses). Requests count whether or not the address has an
// account, so the limit says nothing about it either.
const (
	ForgotEmailWindow   = time.Hour
	MaxForgotsPerEmail  = 5
	ForgotIPWindow      = 15 * time.Minute
	MaxForgotsPerIP     = 20
	forgotRetentionSpan = time.Hour
)

// ErrMailDisabled refuses a reset by e-mail when LINKQR_SMTP_URL is unset.
var ErrMailDisabled = errors.New("e-mail is not configured")

// JobInserter enqueues River jobs on a caller's transaction;
// *river.Client[pgx.Tx] is one.
type JobInserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// RequestPasswordReset handles the forgot-password form: it checks the
// address's form and the throttle, then queues a job that looks the address
// up and, when it has an account, mails it a reset link. The request itself
// never looks at the users table, so its answer and its timing are the same
// for every address. Errors: validate.Errors, *ThrottledError,
// ErrMailDisabled.
func (s *Service) RequestPasswordReset(ctx context.Context, email string, ip netip.Addr) error {
	var errs validate.Errors
	email = NormalizeEmail("/email", email, &errs)
	if err := errs.Err(); err != nil {
		return err
	}
	if s.jobs == nil {
		return ErrMailDisabled
	}
	if err := s.countForgot(ctx, emailKey(email), ip); err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx pgx.Tx) error {
		_, err := s.jobs.InsertTx(ctx, tx, ResetRequestArgs{Email: email}, nil)
		return err
	})
}

// countForgot records a forgot-password request and refuses it (removing
// the record again) when a window is full.
func (s *Service) countForgot(ctx context.Context, key string, ip netip.Addr) error {
	q := accountdb.New()
	now := s.now().Truncate(time.Microsecond)
	conn := s.db.Conn(ctx)
	if err := q.PasswordResetRequestPrune(ctx, conn, now.Add(-forgotRetentionSpan)); err != nil {
		return store.InterpretError(err)
	}
	var ipArg *netip.Addr
	if ip.IsValid() {
		ip = ip.Unmap()
		ipArg = &ip
	}
	id, err := q.PasswordResetRequestInsert(ctx, conn, accountdb.PasswordResetRequestInsertParams{EmailKey: key, IP: ipArg, RequestedAt: now})
	if err != nil {
		return store.InterpretError(err)
	}
	c, err := q.PasswordResetRequestCounts(ctx, conn, accountdb.PasswordResetRequestCountsParams{
		EmailKey: key, EmailSince: now.Add(-ForgotEmailWindow), IP: ipArg, IpSince: now.Add(-ForgotIPWindow),
	})
	if err != nil {
		return store.InterpretError(err)
	}
	var wait time.Duration
	throttled := false
	if int(c.ByEmail) > MaxForgotsPerEmail {
		throttled, wait = true, c.OldestByEmail.Add(ForgotEmailWindow).Sub(now)
	}
	if ipArg != nil && int(c.ByIp) > MaxForgotsPerIP {
		throttled, wait = true, max(wait, c.OldestByIp.Add(ForgotIPWindow).Sub(now))
	}
	if throttled {
		if err := q.PasswordResetRequestDelete(context.WithoutCancel(ctx), conn, id); err != nil {
			return store.InterpretError(err)
		}
		return &ThrottledError{RetryAfter: max(wait, time.Second)}
	}
	return nil
}

// ResetRequestArgs is the job of one forgot-password request.
type ResetRequestArgs struct {
	Email string `json:"email"`
}

// Kind is River's name of the job.
func (ResetRequestArgs) Kind() string { return "password_reset_request" }

// InsertOpts: a lookup is cheap and the mail it queues has its own retries.
func (ResetRequestArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 5} }

// ResetRequestWorker runs forgot-password requests: an address without an
// account gets nothing, one with an account a fresh reset link by e-mail.
type ResetRequestWorker struct {
	river.WorkerDefaults[ResetRequestArgs]
	Service *Service
}

// Work looks the address up and queues the mail in one transaction.
func (w *ResetRequestWorker) Work(ctx context.Context, job *river.Job[ResetRequestArgs]) error {
	s := w.Service
	return s.db.InTx(ctx, func(tx pgx.Tx) error {
		user, err := accountdb.New().UserGetByEmail(ctx, tx, job.Args.Email)
		if errors.Is(store.InterpretError(err), id.ErrNotFound) {
			return nil
		}
		if err != nil {
			return store.InterpretError(err)
		}
		link, err := s.newResetLink(ctx, tx, user.ID)
		if err != nil {
			return err
		}
		_, err = s.notify(ctx, tx, Notice{Kind: NoticePasswordReset, To: user.Email, Link: link, Expires: s.now().Add(ResetTTL)})
		return err
	})
}

// ResetLink is `linkqr admin user reset-link`: a reset link for the
// address's account, for installations without e-mail (the operator passes
// it on). An unknown address is id.ErrNotFound.
func (s *Service) ResetLink(ctx context.Context, email string) (string, error) {
	var link string
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		user, err := accountdb.New().UserGetByEmail(ctx, tx, email)
		if err != nil {
			return fmt.Errorf("no account with the address %s: %w", email, store.InterpretError(err))
		}
		link, err = s.newResetLink(ctx, tx, user.ID)
		return err
	})
	return link, err
}

func (s *Service) newResetLink(ctx context.Context, tx pgx.Tx, userID uuid.UUID) (string, error) {
	q := accountdb.New()
	now := s.now()
	if err := q.PasswordResetPrune(ctx, tx, now.Add(-24*time.Hour)); err != nil {
		return "", store.InterpretError(err)
	}
	token, hash := newToken()
	if err := q.PasswordResetCreate(ctx, tx, accountdb.PasswordResetCreateParams{
		TokenHash: hash, UserID: userID, CreatedAt: now, ExpiresAt: now.Add(ResetTTL),
	}); err != nil {
		return "", store.InterpretError(err)
	}
	return s.baseURL + "/password/reset/" + token, nil
}

// PasswordResetUser returns the account a reset link is for, when the link
// still works: id.ErrNotFound for an unknown token, *GoneError for a used
// or expired one.
func (s *Service) PasswordResetUser(ctx context.Context, token string) (User, error) {
	hash, ok := parseToken(token)
	if !ok {
		return User{}, id.ErrNotFound
	}
	r, err := accountdb.New().PasswordResetGet(ctx, s.db.Conn(ctx), hash)
	if err != nil {
		return User{}, store.InterpretError(err)
	}
	if state := linkGone(r.UsedAt != nil, false, r.ExpiresAt, s.now()); state != "" {
		return User{}, &GoneError{State: state}
	}
	return User{ID: r.UserID, Email: r.Email}, nil
}

// ResetPassword sets a new password through a reset link (the sign-up
// rules apply: validate.Errors on /password), retires every reset link of
// the user and ends every session they have, in one transaction; the caller
// then signs them in afresh. The link errors are PasswordResetUser's.
func (s *Service) ResetPassword(ctx context.Context, token, password string) (User, error) {
	var errs validate.Errors
	CheckPassword("/password", password, &errs)
	if err := errs.Err(); err != nil {
		return User{}, err
	}
	hash, ok := parseToken(token)
	if !ok {
		return User{}, id.ErrNotFound
	}
	pwHash, err := HashPassword(ctx, password)
	if err != nil {
		return User{}, err
	}
	var user User
	err = s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := accountdb.New()
		r, err := q.PasswordResetGetForUpdate(ctx, tx, hash)
		if err != nil {
			return store.InterpretError(err)
		}
		if state := linkGone(r.UsedAt != nil, false, r.ExpiresAt, s.now()); state != "" {
			return &GoneError{State: state}
		}
		if err := q.PasswordResetUseAll(ctx, tx, accountdb.PasswordResetUseAllParams{UserID: r.UserID, Now: s.now()}); err != nil {
			return store.InterpretError(err)
		}
		user, err = s.setPassword(ctx, tx, r.UserID, pwHash)
		if err != nil {
			return err
		}
		_, err = session.RevokeAll(ctx, tx, r.UserID)
		return err
	})
	return user, err
}

func (s *Service) setPassword(ctx context.Context, tx pgx.Tx, userID uuid.UUID, hash string) (User, error) {
	q := accountdb.New()
	if err := q.UserSetPassword(ctx, tx, accountdb.UserSetPasswordParams{ID: userID, PasswordHash: hash}); err != nil {
		return User{}, store.InterpretError(err)
	}
	row, err := q.UserGetByID(ctx, tx, userID)
	if err != nil {
		return User{}, store.InterpretError(err)
	}
	return userFromRow(row), nil
}
