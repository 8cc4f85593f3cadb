-- name: OAuthClientCreate :one
INSERT INTO oauth_clients (id, workspace_id, created_by, name, grant_type, secret_hash, redirect_uris, scopes, rate_limit_per_minute, ip_allowlist, dynamic, operator)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
RETURNING *;

-- name: OAuthClientGet :one
-- Token endpoint and token verification: revoked clients included, so the
-- caller can tell (and cache) that a client is revoked.
SELECT * FROM oauth_clients WHERE id = $1;

-- name: OAuthClientListByWorkspace :many
SELECT * FROM oauth_clients
WHERE workspace_id = $1 AND revoked_at IS NULL
ORDER BY id DESC;

-- name: OAuthClientRevoke :one
-- Scoped by workspace so a client id of another workspace revokes nothing.
UPDATE oauth_clients SET revoked_at = now()
WHERE id = $1 AND workspace_id = $2 AND revoked_at IS NULL
RETURNING id, workspace_id;

-- name: OAuthGrantCreate :one
INSERT INTO oauth_grants (id, client_id, workspace_id, user_id, scopes, resource)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING *;

-- name: OAuthGrantGet :one
SELECT * FROM oauth_grants WHERE id = $1;

-- name: OAuthGrantRevoke :many
-- Zero rows when the grant was revoked already (nothing to record).
UPDATE oauth_grants SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL
RETURNING id, workspace_id, client_id, user_id;

-- name: OAuthCodeCreate :exec
INSERT INTO oauth_codes (code_hash, client_id, workspace_id, user_id, redirect_uri, scopes, code_challenge, expires_at, resource)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9);

-- name: OAuthCodeGetForUpdate :one
SELECT * FROM oauth_codes WHERE code_hash = $1 FOR UPDATE;

-- name: OAuthCodeRedeem :exec
UPDATE oauth_codes SET used_at = now(), grant_id = $2 WHERE code_hash = $1;

-- name: OAuthRefreshCreate :exec
INSERT INTO oauth_refresh_tokens (token_hash, grant_id, expires_at) VALUES ($1, $2, $3);

-- name: OAuthRefreshGetForUpdate :one
SELECT t.token_hash, t.grant_id, t.expires_at, t.rotated_at,
       g.client_id, g.workspace_id, g.user_id, g.scopes, g.revoked_at AS grant_revoked_at, g.resource
FROM oauth_refresh_tokens t JOIN oauth_grants g ON g.id = t.grant_id
WHERE t.token_hash = $1
FOR UPDATE OF t;

-- name: OAuthRefreshRotate :exec
UPDATE oauth_refresh_tokens SET rotated_at = now() WHERE token_hash = $1;

-- name: OAuthSigningKeyList :many
SELECT * FROM oauth_signing_keys ORDER BY activates_at;

-- name: OAuthSigningKeyCreate :exec
INSERT INTO oauth_signing_keys (kid, alg, public_jwk, private_key_enc, created_at, activates_at)
VALUES ($1, $2, $3, $4, $5, $6);

-- name: OAuthSigningKeyRetire :exec
UPDATE oauth_signing_keys SET published_until = $2 WHERE kid = $1 AND published_until IS NULL;

-- name: OAuthSigningKeyDeleteExpired :execrows
DELETE FROM oauth_signing_keys WHERE published_until IS NOT NULL AND published_until < $1;

-- name: OAuthSigningKeyLock :exec
SELECT pg_advisory_xact_lock(7243001);

-- name: OAuthMembershipExists :one
SELECT EXISTS (SELECT 1 FROM memberships WHERE workspace_id = $1 AND user_id = $2);

-- name: OAuthClientRevokeAllByCreator :many
-- Removing a member: the clients they created for the workspace stop working.
UPDATE oauth_clients SET revoked_at = now()
WHERE workspace_id = $1 AND created_by = $2 AND revoked_at IS NULL
RETURNING id;

-- name: OAuthGrantRevokeAllOfMember :many
-- Removing a member: partners stop acting for them in the workspace.
UPDATE oauth_grants SET revoked_at = now()
WHERE workspace_id = $1 AND user_id = $2 AND revoked_at IS NULL
RETURNING id;

-- name: OAuthClientRevokeAny :one
-- Operator command: any client, partner or workspace-bound.
UPDATE oauth_clients SET revoked_at = now()
WHERE id = $1 AND revoked_at IS NULL
RETURNING id, workspace_id;

-- name: OAuthClientRevokeAllByWorkspace :many
-- Deleting a workspace: its client-credentials clients stop working.
UPDATE oauth_clients SET revoked_at = now()
WHERE workspace_id = $1 AND revoked_at IS NULL
RETURNING id;

-- name: OAuthGrantRevokeAllByWorkspace :many
-- Deleting a workspace: no partner acts for anyone in it any more.
UPDATE oauth_grants SET revoked_at = now()
WHERE workspace_id = $1 AND revoked_at IS NULL
RETURNING id;

-- name: OAuthClientListAll :many
-- Operator listing (`linkqr admin oauth-client list`): every client, newest
-- first, revoked ones only when asked for, with its active grant count.
SELECT c.*, (SELECT count(*) FROM oauth_grants g WHERE g.client_id = c.id AND g.revoked_at IS NULL)::bigint AS active_grants
FROM oauth_clients c
WHERE (sqlc.arg(include_revoked)::boolean OR c.revoked_at IS NULL)
  AND (NOT sqlc.arg(dynamic_only)::boolean OR c.dynamic)
ORDER BY c.id DESC;
