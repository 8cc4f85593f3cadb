-- +goose Up
-- Accounts that manage themselves: invitation links, password resets and
-- a list of one's sessions.

-- An invitation is now also reachable through a link
-- {base}/invitations/{token}. Only the SHA-256 of the token (256 random
-- bits) is stored, so the table yields no usable link. Invitations made
-- before this migration have none and stay answerable from the invitee's
-- list.
ALTER TABLE invitations ADD COLUMN token_hash bytea CHECK (length(token_hash) = 32);
CREATE UNIQUE INDEX invitations_token_hash_key ON invitations (token_hash);

-- Password reset links {base}/password/reset/{token}: single use, valid
-- for 60 minutes, stored as the SHA-256 of the token.
CREATE TABLE password_resets (
    token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL CHECK (expires_at > created_at),
    used_at    timestamptz
);
CREATE INDEX password_resets_user_idx ON password_resets (user_id);
CREATE INDEX password_resets_expires_idx ON password_resets (expires_at);

-- Forgot-password requests, counted per address and per client IP over a
-- sliding window like sign-in failures, so the form cannot be used to
-- flood an inbox or to make the server send mail without bound.
CREATE TABLE password_reset_requests (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email_key    text NOT NULL,
    ip           inet,
    requested_at timestamptz NOT NULL
);
CREATE INDEX password_reset_requests_email_idx ON password_reset_requests (email_key, requested_at);
CREATE INDEX password_reset_requests_ip_idx ON password_reset_requests (ip, requested_at);
CREATE INDEX password_reset_requests_at_idx ON password_reset_requests (requested_at);

-- The account page lists a user's sessions: ref names one in forms (the id
-- hash is never shown), and the browser, address and last use describe it.
ALTER TABLE sessions
    ADD COLUMN ref          uuid NOT NULL DEFAULT gen_random_uuid(),
    ADD COLUMN user_agent   text CHECK (length(user_agent) <= 512),
    ADD COLUMN ip           inet,
    ADD COLUMN last_seen_at timestamptz NOT NULL DEFAULT now();
CREATE UNIQUE INDEX sessions_ref_key ON sessions (ref);

-- +goose Down
DROP INDEX sessions_ref_key;
ALTER TABLE sessions DROP COLUMN ref, DROP COLUMN user_agent, DROP COLUMN ip, DROP COLUMN last_seen_at;
DROP TABLE password_reset_requests;
DROP TABLE password_resets;
DROP INDEX invitations_token_hash_key;
ALTER TABLE invitations DROP COLUMN token_hash;
