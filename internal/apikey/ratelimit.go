package apikey

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/apikey/internal/apikeydb"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/validate"
)

// ChangedChannel is the NOTIFY channel carrying the public id of each key
// whose settings changed; every instance drops its cached copy, so the next
// request sees the new settings.
const ChangedChannel = "linkqr_api_key_changed"

// ValidateRateLimit checks a requests-per-minute limit (docs/api.md#rate-limits),
// reporting a /rate_limit_per_minute field error.
func ValidateRateLimit(perMinute int) error {
	var errs validate.Errors
	if perMinute < MinRateLimit || perMinute > MaxRateLimit {
		errs.Add("/rate_limit_per_minute", fmt.Sprintf("must be a whole number from %d to %d", MinRateLimit, MaxRateLimit))
	}
	return errs.Err()
}

// SetRateLimit changes a key's limit (only the creator's own key unless
// onlyCreator is nil). The rate limiter reads the limit from the verified
// key, so the change is published like a revocation: this instance drops the
// key from its cache right after the commit and every other one when the
// NOTIFY arrives, and the next request on any instance is limited by the new
// value, with the usage so far still counted. A key of another workspace, or
// revoked, is id.ErrNotFound.
func (s *Service) SetRateLimit(ctx context.Context, workspaceID, keyID uuid.UUID, onlyCreator *uuid.UUID, perMinute int) (Key, error) {
	if err := ValidateRateLimit(perMinute); err != nil {
		return Key{}, err
	}
	var row apikeydb.APIKey
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		row, err = apikeydb.New().APIKeySetRateLimit(ctx, tx, apikeydb.APIKeySetRateLimitParams{
			ID: keyID, WorkspaceID: workspaceID, CreatedBy: onlyCreator, RateLimitPerMinute: int32(perMinute),
		})
		if err != nil {
			return store.InterpretError(err)
		}
		return store.Notify(ctx, tx, ChangedChannel, row.PublicID)
	})
	if err != nil {
		return Key{}, err
	}
	store.AfterCommit(ctx, func() { s.cache.invalidate(row.PublicID) })
	return fromRow(row), nil
}
