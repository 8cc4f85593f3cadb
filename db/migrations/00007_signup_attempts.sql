-- +goose Up
-- Sign-up attempts per client IP over a sliding window, so one address
-- cannot make the server run argon2id (and create accounts) without bound.
-- Like signin_failures it lives in PostgreSQL, so the limit holds across
-- instances; a row is inserted before the limit is checked and deleted when
-- the attempt is refused (throttled, or the server was too busy), so
-- concurrent attempts see each other.
CREATE TABLE signup_attempts (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ip           inet NOT NULL,
    attempted_at timestamptz NOT NULL
);
CREATE INDEX signup_attempts_ip_idx ON signup_attempts (ip, attempted_at);
CREATE INDEX signup_attempts_attempted_at_idx ON signup_attempts (attempted_at);

-- Sign-in failures are now also counted per (address, IP), which the
-- address index serves; the per-address backstop looks back an hour.

-- +goose Down
DROP TABLE signup_attempts;
