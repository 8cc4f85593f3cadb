-- name: ConnectionGet :one
SELECT * FROM sso_connections WHERE workspace_id = $1;

-- name: ConnectionGetForUpdate :one
SELECT * FROM sso_connections WHERE workspace_id = $1 FOR UPDATE;

-- name: ConnectionUpsert :one
INSERT INTO sso_connections (workspace_id, issuer, client_id, client_secret_ciphertext, default_role, required, break_glass_user_id)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (workspace_id) DO UPDATE SET
    issuer = EXCLUDED.issuer,
    client_id = EXCLUDED.client_id,
    client_secret_ciphertext = EXCLUDED.client_secret_ciphertext,
    default_role = EXCLUDED.default_role,
    required = EXCLUDED.required,
    break_glass_user_id = EXCLUDED.break_glass_user_id,
    updated_at = now()
RETURNING *;

-- name: DomainListByWorkspace :many
SELECT * FROM sso_domains WHERE workspace_id = $1 ORDER BY domain;

-- name: DomainInsert :exec
INSERT INTO sso_domains (workspace_id, domain, verification_token)
VALUES ($1, $2, $3)
ON CONFLICT (workspace_id, domain) DO NOTHING;

-- name: DomainDeleteExcept :exec
DELETE FROM sso_domains WHERE workspace_id = $1 AND NOT (domain = ANY(sqlc.arg(keep)::text[]));

-- name: DomainGet :one
SELECT * FROM sso_domains WHERE workspace_id = $1 AND domain = $2;

-- name: DomainMarkVerified :one
UPDATE sso_domains SET status = 'verified', verified_at = $3
WHERE workspace_id = $1 AND domain = $2
RETURNING *;

-- name: DomainVerifiedElsewhere :one
SELECT EXISTS (
    SELECT 1 FROM sso_domains WHERE domain = $1 AND status = 'verified' AND workspace_id <> $2
);

-- name: ConnectionByVerifiedDomain :one
SELECT c.* FROM sso_connections c
JOIN sso_domains d ON d.workspace_id = c.workspace_id
WHERE d.domain = $1 AND d.status = 'verified';

-- name: UserEmail :one
SELECT email FROM users WHERE id = $1;
