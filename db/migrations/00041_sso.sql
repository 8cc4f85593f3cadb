-- +goose Up
-- Single sign-on (docs/ui.md#single-sign-on): one OIDC connection per
-- workspace. The client secret is sealed (internal/sealbox, associated data
-- = the workspace id), never stored or shown in the clear.
CREATE TABLE sso_connections (
    workspace_id             uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
    issuer                   text NOT NULL CHECK (length(issuer) BETWEEN 1 AND 2048),
    client_id                text NOT NULL CHECK (length(client_id) BETWEEN 1 AND 512),
    client_secret_ciphertext bytea NOT NULL,
    default_role             text NOT NULL DEFAULT 'member' CHECK (default_role IN ('admin', 'member')),
    -- "Require SSO": password sign-in is refused for the addresses of the
    -- verified domains, except for break_glass_user_id, the admin who
    -- turned it on.
    required                 boolean NOT NULL DEFAULT false,
    break_glass_user_id      uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at               timestamptz NOT NULL DEFAULT now(),
    updated_at               timestamptz NOT NULL DEFAULT now()
);

-- The e-mail domains whose addresses sign in through the connection,
-- proven like custom domains by TXT _linkqr.<domain> =
-- "linkqr-verification=<token>" (the token is public once published).
CREATE TABLE sso_domains (
    workspace_id       uuid NOT NULL REFERENCES sso_connections (workspace_id) ON DELETE CASCADE,
    domain             text NOT NULL CHECK (length(domain) BETWEEN 1 AND 253 AND domain = lower(domain)),
    status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'verified')),
    verification_token text NOT NULL,
    verified_at        timestamptz,
    created_at         timestamptz NOT NULL DEFAULT now(),
    CHECK ((status = 'verified') = (verified_at IS NOT NULL)),
    PRIMARY KEY (workspace_id, domain)
);
-- One workspace at most holds an e-mail domain verified.
CREATE UNIQUE INDEX sso_domains_verified_key ON sso_domains (domain) WHERE status = 'verified';

-- +goose Down
DROP TABLE sso_domains;
DROP TABLE sso_connections;
