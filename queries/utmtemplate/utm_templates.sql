-- name: UTMTemplateListByWorkspace :many
-- A workspace's templates by name (at most 50, so no paging).
SELECT * FROM utm_templates
WHERE workspace_id = $1
ORDER BY lower(name), id;

-- name: UTMTemplateGetByID :one
SELECT * FROM utm_templates
WHERE id = $1 AND workspace_id = $2;

-- name: UTMTemplateLockWorkspace :exec
-- Serialises the template additions of one workspace, so two concurrent
-- adds cannot both pass the per-workspace limit. NO KEY UPDATE does not
-- block the foreign-key checks of other inserts.
SELECT id FROM workspaces WHERE id = $1 FOR NO KEY UPDATE;

-- name: UTMTemplateCountByWorkspace :one
SELECT count(*) FROM utm_templates WHERE workspace_id = $1;

-- name: UTMTemplateCreate :one
INSERT INTO utm_templates (id, workspace_id, name, utm_source, utm_medium, utm_campaign, utm_term, utm_content)
VALUES (sqlc.arg(id), sqlc.arg(workspace_id), sqlc.arg(name), sqlc.narg(utm_source), sqlc.narg(utm_medium),
        sqlc.narg(utm_campaign), sqlc.narg(utm_term), sqlc.narg(utm_content))
RETURNING *;

-- name: UTMTemplateGetForUpdate :one
SELECT * FROM utm_templates
WHERE id = $1 AND workspace_id = $2
FOR UPDATE;

-- name: UTMTemplateUpdate :one
UPDATE utm_templates
SET name = sqlc.arg(name), utm_source = sqlc.narg(utm_source), utm_medium = sqlc.narg(utm_medium),
    utm_campaign = sqlc.narg(utm_campaign), utm_term = sqlc.narg(utm_term), utm_content = sqlc.narg(utm_content),
    updated_at = now()
WHERE id = sqlc.arg(id) AND workspace_id = sqlc.arg(workspace_id)
RETURNING *;

-- name: UTMTemplateDelete :one
DELETE FROM utm_templates
WHERE id = $1 AND workspace_id = $2
RETURNING *;
