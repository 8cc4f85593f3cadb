-- name: WorkspaceCreate :one
INSERT INTO workspaces (id, name)
VALUES ($1, $2)
RETURNING *;

-- name: WorkspaceGetForUser :one
-- A workspace is only ever read through a membership, so a user can never
-- reach a workspace they do not belong to.
SELECT w.*, m.role
FROM workspaces w
JOIN memberships m ON m.workspace_id = w.id
WHERE w.id = $1 AND m.user_id = $2;

-- name: WorkspaceGetByID :one
-- A deleted workspace (its rows being purged) is not found.
SELECT * FROM workspaces WHERE id = $1 AND deleted_at IS NULL;

-- name: WorkspaceListForUser :many
SELECT w.*, m.role
FROM workspaces w
JOIN memberships m ON m.workspace_id = w.id
WHERE m.user_id = $1
ORDER BY w.name, w.id;

-- name: WorkspaceFindAdminByName :one
-- Used by `admin bootstrap` to stay idempotent: the same user and workspace
-- name yield the same workspace.
SELECT w.*
FROM workspaces w
JOIN memberships m ON m.workspace_id = w.id
WHERE m.user_id = $1 AND m.role = 'admin' AND w.name = $2
ORDER BY w.id
LIMIT 1;

-- name: WorkspaceLock :one
-- Serialises changes to a workspace's memberships, so that two admins
-- demoting each other at once cannot leave the workspace without an admin.
SELECT id FROM workspaces WHERE id = $1 FOR UPDATE;

-- name: WorkspaceRename :one
UPDATE workspaces SET name = $2 WHERE id = $1
RETURNING *;

-- name: WorkspaceSetTimezone :one
-- The zone analytics cut days in when a request names none.
UPDATE workspaces SET timezone = $2 WHERE id = $1 AND deleted_at IS NULL
RETURNING *;
