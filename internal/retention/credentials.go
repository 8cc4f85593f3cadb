package retention

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/retention/internal/retentiondb"
	"github.com/linkqr/linkqr/internal/store"
)

// These grace periods keep an expired token a little longer where its row
// still answers something: a second use of an OAuth code within the hour
// revokes what the first issued (oauth), and a reset link says "expired"
// rather than "unknown" for a day (account prunes them so too).
const (
	oauthCodeGrace     = time.Hour
	passwordResetGrace = 24 * time.Hour
)

// UnusedDynamicClientAge is how long a self-registered OAuth client (RFC
// 7591) that no user ever consented to is kept: a client that signs in
// registers and gets consent within minutes.
const UnusedDynamicClientAge = 30 * 24 * time.Hour

// credentials deletes expired sessions, OAuth codes and refresh tokens,
// unused self-registered OAuth clients, password reset links, and the
// throttling counters older than the longest
// window that reads them (account.SignInWindow and friends): a counter
// row outside its window no longer counts.
func (r *run) credentials(ctx context.Context) error {
	q, now := retentiondb.New(), r.now
	for _, t := range []struct {
		table string
		del   func(ctx context.Context, db retentiondb.DBTX, lim int32) (int64, error)
	}{
		{"sessions", func(ctx context.Context, db retentiondb.DBTX, lim int32) (int64, error) {
			return q.RetentionSessionsExpired(ctx, db, retentiondb.RetentionSessionsExpiredParams{Now: now, Lim: lim})
		}},
		{"oauth_codes", func(ctx context.Context, db retentiondb.DBTX, lim int32) (int64, error) {
			return q.RetentionOAuthCodesExpired(ctx, db, retentiondb.RetentionOAuthCodesExpiredParams{Now: now.Add(-oauthCodeGrace), Lim: lim})
		}},
		{"oauth_refresh_tokens", func(ctx context.Context, db retentiondb.DBTX, lim int32) (int64, error) {
			return q.RetentionOAuthRefreshTokensExpired(ctx, db, retentiondb.RetentionOAuthRefreshTokensExpiredParams{Now: now, Lim: lim})
		}},
		{"password_resets", func(ctx context.Context, db retentiondb.DBTX, lim int32) (int64, error) {
			return q.RetentionPasswordResetsExpired(ctx, db, retentiondb.RetentionPasswordResetsExpiredParams{Now: now.Add(-passwordResetGrace), Lim: lim})
		}},
		{"password_reset_requests", func(ctx context.Context, db retentiondb.DBTX, lim int32) (int64, error) {
			before := now.Add(-max(account.ForgotEmailWindow, account.ForgotIPWindow))
			return q.RetentionPasswordResetRequestsBefore(ctx, db, retentiondb.RetentionPasswordResetRequestsBeforeParams{Before: before, Lim: lim})
		}},
		{"signin_failures", func(ctx context.Context, db retentiondb.DBTX, lim int32) (int64, error) {
			before := now.Add(-max(account.SignInWindow, account.EmailBackstopWindow))
			return q.RetentionSigninFailuresBefore(ctx, db, retentiondb.RetentionSigninFailuresBeforeParams{Before: before, Lim: lim})
		}},
		{"signup_attempts", func(ctx context.Context, db retentiondb.DBTX, lim int32) (int64, error) {
			return q.RetentionSignupAttemptsBefore(ctx, db, retentiondb.RetentionSignupAttemptsBeforeParams{Before: now.Add(-account.SignUpWindow), Lim: lim})
		}},
		{"oauth_clients", r.unusedDynamicClients},
		{"link_imports", func(ctx context.Context, db retentiondb.DBTX, lim int32) (int64, error) {
			// An import's rows go with it (cascade): a few at a time.
			return q.RetentionLinkImportsExpired(ctx, db, retentiondb.RetentionLinkImportsExpiredParams{Before: now, Lim: min(lim, 10)})
		}},
	} {
		err := r.batches(ctx, t.table, r.budget(), func(ctx context.Context, lim int32) (int64, error) {
			return t.del(ctx, r.p.DB.Conn(ctx), lim)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// invitations deletes invitations accepted, declined or revoked, or left
// to expire, more than Policy.Invitations ago.
func (r *run) invitations(ctx context.Context) error {
	before := r.now.Add(-r.p.Policy.Invitations)
	return r.batches(ctx, "invitations", r.budget(), func(ctx context.Context, lim int32) (int64, error) {
		return retentiondb.New().RetentionInvitationsClosedBefore(ctx, r.p.DB.Conn(ctx), retentiondb.RetentionInvitationsClosedBeforeParams{Before: before, Lim: lim})
	})
}

// unusedDynamicClients deletes a batch of self-registered clients nobody
// consented to within UnusedDynamicClientAge, and tells every instance to
// drop them from its client cache (in the same transaction), so a cached
// copy cannot lead to a consent for a client that no longer exists.
func (r *run) unusedDynamicClients(ctx context.Context, _ retentiondb.DBTX, lim int32) (int64, error) {
	var n int64
	err := r.p.DB.InTx(ctx, func(tx pgx.Tx) error {
		ids, err := retentiondb.New().RetentionOAuthDynamicClientsUnused(ctx, tx, retentiondb.RetentionOAuthDynamicClientsUnusedParams{
			Before: r.now.Add(-UnusedDynamicClientAge), Lim: lim,
		})
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := store.Notify(ctx, tx, oauth.RevokedChannel, "c:"+id.String()); err != nil {
				return err
			}
		}
		n = int64(len(ids))
		return nil
	})
	return n, err
}
