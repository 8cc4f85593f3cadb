-- +goose Up
-- On-demand TLS (LINKQR_TLS_ADDR): what the ACME client keeps between
-- handshakes (internal/certs). In PostgreSQL rather than on a disk so that
-- every instance shares one account and one certificate per domain: a
-- certificate one instance obtained is served by all, and a challenge the
-- CA sends to any instance is answered.
CREATE TABLE acme_cache (
    -- The ACME directory URL the entry came from: certificates of a staging
    -- CA are never served once another directory is configured.
    issuer     text NOT NULL,
    -- The ACME client's key: a hostname (its certificate and private key),
    -- "acme_account+key", or a challenge's short-lived token.
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 300),
    -- Private keys are secrets: AES-256-GCM under a key derived from
    -- LINKQR_SECRET_KEY, nonce || ciphertext, with issuer and name as the
    -- associated data (a value copied onto another row does not decrypt).
    value_enc  bytea NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (issuer, name)
);

-- +goose Down
DROP TABLE acme_cache;
