-- +goose Up
-- Browser sessions, kept server-side so that signing in can issue a brand-new
-- id (no session fixation) and signing out really ends the session. The
-- cookie carries a random id signed with a key derived from
-- LINKQR_SECRET_KEY; this table stores only the SHA-256 of that id, so a
-- read of the table yields no usable session. data is the session's values,
-- encrypted and authenticated (it may briefly hold a just-minted API key
-- secret until the page showing it has been rendered once).
CREATE TABLE sessions (
    id_hash    bytea PRIMARY KEY CHECK (length(id_hash) = 32),
    user_id    uuid REFERENCES users (id) ON DELETE CASCADE,
    data       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_expires_at_idx ON sessions (expires_at);
CREATE INDEX sessions_user_id_idx ON sessions (user_id);

-- Failed sign-in attempts, counted per e-mail address and per client IP
-- over a sliding window. Kept in PostgreSQL so that the limits hold across
-- every instance. A row is inserted before the password is checked and
-- deleted again when the attempt succeeds or is refused as throttled, so
-- concurrent attempts see each other.
CREATE TABLE signin_failures (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email_key text NOT NULL,
    ip        inet,
    failed_at timestamptz NOT NULL
);
CREATE INDEX signin_failures_email_idx ON signin_failures (email_key, failed_at);
CREATE INDEX signin_failures_ip_idx ON signin_failures (ip, failed_at);
CREATE INDEX signin_failures_failed_at_idx ON signin_failures (failed_at);

-- +goose Down
DROP TABLE signin_failures;
DROP TABLE sessions;
