-- name: APIKeyCreate :one
INSERT INTO api_keys (id, workspace_id, created_by, name, public_id, secret_hash, scopes, rate_limit_per_minute, ip_allowlist, operator)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
RETURNING *;

-- name: APIKeyGetActiveByPublicID :one
-- Bearer authentication: the public id is the handle, the workspace comes
-- from the row, and revoked keys never match.
SELECT * FROM api_keys WHERE public_id = $1 AND revoked_at IS NULL;

-- name: APIKeyListByWorkspace :many
SELECT * FROM api_keys
WHERE workspace_id = $1 AND revoked_at IS NULL
ORDER BY id DESC;

-- name: APIKeyListByCreator :many
SELECT * FROM api_keys
WHERE workspace_id = $1 AND created_by = $2 AND revoked_at IS NULL
ORDER BY id DESC;

-- name: APIKeyRevoke :one
-- Scoped by workspace so a key id of another workspace revokes nothing;
-- by creator too unless the caller is an admin (creator is then NULL).
UPDATE api_keys SET revoked_at = now()
WHERE id = $1 AND workspace_id = $2 AND revoked_at IS NULL
  AND (sqlc.narg(created_by)::uuid IS NULL OR created_by = sqlc.narg(created_by)::uuid)
RETURNING public_id;

-- name: APIKeyTouch :exec
UPDATE api_keys SET last_used_at = now() WHERE id = $1;

-- name: APIKeyRevokeAllByCreator :many
-- Removing a member: every key they created in the workspace stops working.
UPDATE api_keys SET revoked_at = now()
WHERE workspace_id = $1 AND created_by = $2 AND revoked_at IS NULL
RETURNING public_id;

-- name: APIKeySetRateLimit :one
-- Scoped like APIKeyRevoke: the workspace, and the creator unless the
-- caller is an admin; a revoked key cannot be changed.
UPDATE api_keys SET rate_limit_per_minute = $3
WHERE id = $1 AND workspace_id = $2 AND revoked_at IS NULL
  AND (sqlc.narg(created_by)::uuid IS NULL OR created_by = sqlc.narg(created_by)::uuid)
RETURNING *;

-- name: APIKeyRevokeAllByWorkspace :many
-- Deleting a workspace: every key of it stops working.
UPDATE api_keys SET revoked_at = now()
WHERE workspace_id = $1 AND revoked_at IS NULL
RETURNING public_id;
