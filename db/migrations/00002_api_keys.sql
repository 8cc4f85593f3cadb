-- +goose Up
-- API keys: bearer credentials of a workspace. The token itself is never
-- stored; public_id is the lookup handle and secret_hash the argon2id hash of
-- the whole token.
CREATE TABLE api_keys (
    id                    uuid PRIMARY KEY,
    workspace_id          uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    created_by            uuid REFERENCES users (id) ON DELETE SET NULL,
    name                  text NOT NULL CHECK (name <> '' AND length(name) <= 100),
    public_id             text NOT NULL UNIQUE CHECK (public_id ~ '^[A-Za-z0-9]{12}$'),
    secret_hash           text NOT NULL,
    scopes                text[] NOT NULL,
    rate_limit_per_minute integer NOT NULL DEFAULT 600 CHECK (rate_limit_per_minute BETWEEN 1 AND 100000),
    ip_allowlist          text[] NOT NULL DEFAULT '{}',
    created_at            timestamptz NOT NULL DEFAULT now(),
    last_used_at          timestamptz,
    revoked_at            timestamptz
);
CREATE INDEX api_keys_workspace_idx ON api_keys (workspace_id, id DESC);

-- +goose Down
DROP TABLE api_keys;
