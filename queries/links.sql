-- name: LinkCreate :one
INSERT INTO links (id, workspace_id, code, target_url, title, expires_at)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING *;

-- name: LinkGetByID :one
SELECT * FROM links
WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL;

-- name: LinkGetByIDForUpdate :one
SELECT * FROM links
WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL
FOR UPDATE;

-- name: LinkListByWorkspace :many
-- Newest first; the cursor is the id of the last link of the previous page
-- (ids are UUIDv7, so id order is creation order).
SELECT * FROM links
WHERE workspace_id = $1 AND deleted_at IS NULL
  AND (sqlc.narg(before)::uuid IS NULL OR id < sqlc.narg(before)::uuid)
ORDER BY id DESC
LIMIT $2;

-- name: LinkUpdate :one
UPDATE links
SET target_url = $3, title = $4, status = $5, expires_at = $6, updated_at = now()
WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL
RETURNING *;

-- name: LinkDelete :one
UPDATE links SET deleted_at = now(), updated_at = now()
WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL
RETURNING *;

-- name: LinkResolveCode :one
-- The redirect's cache miss: everything needed to answer GET /{code}.
SELECT id, workspace_id, target_url, status, expires_at, deleted_at
FROM links WHERE code = $1;
