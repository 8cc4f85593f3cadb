-- +goose Up
-- OAuth 2.0 (docs/api.md#oauth-20). Secrets and tokens are never stored in
-- the clear: client secrets as argon2id hashes, codes and refresh tokens
-- (256 random bits each) as SHA-256 digests, signing keys AES-GCM encrypted.

-- oauth_clients: client-credentials clients belong to one workspace;
-- authorization-code (partner) clients have none (the user picks one at
-- consent). secret_hash is NULL for public clients.
CREATE TABLE oauth_clients (
    id                    uuid PRIMARY KEY,
    workspace_id          uuid REFERENCES workspaces (id) ON DELETE CASCADE,
    created_by            uuid REFERENCES users (id) ON DELETE SET NULL,
    name                  text NOT NULL CHECK (name <> '' AND length(name) <= 100),
    grant_type            text NOT NULL CHECK (grant_type IN ('client_credentials', 'authorization_code')),
    secret_hash           text,
    redirect_uris         text[] NOT NULL DEFAULT '{}',
    scopes                text[] NOT NULL,
    rate_limit_per_minute integer NOT NULL DEFAULT 600 CHECK (rate_limit_per_minute BETWEEN 1 AND 100000),
    ip_allowlist          text[] NOT NULL DEFAULT '{}',
    created_at            timestamptz NOT NULL DEFAULT now(),
    revoked_at            timestamptz,
    CHECK ((grant_type = 'client_credentials') = (workspace_id IS NOT NULL)),
    CHECK (grant_type = 'authorization_code' OR secret_hash IS NOT NULL)
);
CREATE INDEX oauth_clients_workspace_idx ON oauth_clients (workspace_id, id DESC);

-- oauth_grants: one user's consent to one partner in one workspace; the
-- "family" of every refresh token rotated from its code. Revoking it stops
-- its refresh tokens and its access tokens (checked through a cache).
CREATE TABLE oauth_grants (
    id           uuid PRIMARY KEY,
    client_id    uuid NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    scopes       text[] NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz
);

-- oauth_codes: authorization codes, single use, 60 s. grant_id is set when
-- the code is redeemed, so a second use can revoke what the first issued.
CREATE TABLE oauth_codes (
    code_hash      bytea PRIMARY KEY,
    client_id      uuid NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    workspace_id   uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    redirect_uri   text NOT NULL,
    scopes         text[] NOT NULL,
    code_challenge text NOT NULL,
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz,
    grant_id       uuid REFERENCES oauth_grants (id) ON DELETE CASCADE
);
CREATE INDEX oauth_codes_expires_idx ON oauth_codes (expires_at);

-- oauth_refresh_tokens: every refresh token of a grant; rotated_at is set
-- when it was exchanged, so presenting it again is reuse.
CREATE TABLE oauth_refresh_tokens (
    token_hash bytea PRIMARY KEY,
    grant_id   uuid NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    rotated_at timestamptz
);
CREATE INDEX oauth_refresh_tokens_grant_idx ON oauth_refresh_tokens (grant_id);

-- oauth_signing_keys: the JWT signing keys. A key signs from activates_at
-- until its successor activates; it is published from creation until
-- every token it signed has expired (published_until, set at retirement).
CREATE TABLE oauth_signing_keys (
    kid             text PRIMARY KEY,
    alg             text NOT NULL,
    public_jwk      jsonb NOT NULL,
    private_key_enc bytea NOT NULL,
    created_at      timestamptz NOT NULL,
    activates_at    timestamptz NOT NULL UNIQUE,
    published_until timestamptz
);

-- +goose Down
DROP TABLE oauth_signing_keys;
DROP TABLE oauth_refresh_tokens;
DROP TABLE oauth_codes;
DROP TABLE oauth_grants;
DROP TABLE oauth_clients;
