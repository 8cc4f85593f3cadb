-- +goose Up
-- Second factors (docs/ui.md#two-factor-sign-in). A user has at most one
-- TOTP authenticator; its secret is sealed (internal/sealbox, associated
-- data = the user id) because checking a code needs it. confirmed_at is
-- NULL while the user has scanned it but not yet entered a code.
-- last_step is the RFC 6238 time step of the last accepted code, so a code
-- is accepted once.
CREATE TABLE totp_factors (
    user_id           uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    secret_ciphertext bytea NOT NULL,
    confirmed_at      timestamptz,
    last_step         bigint NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT now()
);

-- Ten single-use recovery codes per user, stored as HMAC-SHA256 under a
-- server key (the codes are random with ~51 bits each: a slow hash adds
-- nothing, a keyed one keeps a database copy useless).
CREATE TABLE recovery_codes (
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash  bytea NOT NULL,
    used_at    timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, code_hash)
);

-- Passkeys (WebAuthn credentials). credential is go-webauthn's Credential
-- as JSON (public key, sign count, flags, transports); credential_id is
-- unique across users, as authenticators make it.
CREATE TABLE passkeys (
    id            uuid PRIMARY KEY,
    user_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    credential_id bytea NOT NULL UNIQUE,
    name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    credential    jsonb NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_used_at  timestamptz
);
CREATE INDEX passkeys_user_idx ON passkeys (user_id, created_at);

-- "Require a second factor" per workspace: members without one are asked
-- to enrol before they reach the workspace.
CREATE TABLE workspace_two_factor (
    workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
    required     boolean NOT NULL DEFAULT false,
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE workspace_two_factor;
DROP TABLE passkeys;
DROP TABLE recovery_codes;
DROP TABLE totp_factors;
