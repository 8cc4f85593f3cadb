-- +goose Up
-- Settings → Authorized apps shows each grant's last use. last_used_at is
-- set when the grant is created (the authorization code is redeemed, so the
-- column's default) and when one of its refresh tokens is exchanged (at
-- most once a minute per grant). Grants older than this migration have
-- NULL until their next refresh: "not recorded yet", never a made-up time.
ALTER TABLE oauth_grants ADD COLUMN last_used_at timestamptz;
ALTER TABLE oauth_grants ALTER COLUMN last_used_at SET DEFAULT now();

-- The page lists one user's live grants.
CREATE INDEX oauth_grants_user_idx ON oauth_grants (user_id, created_at DESC) WHERE revoked_at IS NULL;

-- +goose Down
DROP INDEX oauth_grants_user_idx;
ALTER TABLE oauth_grants DROP COLUMN last_used_at;
