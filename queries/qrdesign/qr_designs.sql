-- name: QRDesignGetLink :one
-- A link's own design; the link must be a live link of the workspace.
SELECT d.* FROM qr_designs d
JOIN links l ON l.id = d.link_id
WHERE d.workspace_id = sqlc.arg(workspace_id) AND d.link_id = sqlc.arg(link_id)
  AND l.workspace_id = sqlc.arg(workspace_id) AND l.deleted_at IS NULL;

-- name: QRDesignGetDefault :one
-- The workspace's default design.
SELECT * FROM qr_designs WHERE workspace_id = $1 AND link_id IS NULL;

-- name: QRDesignListLinks :many
-- The own designs of some links of the workspace (the ZIP's batch).
SELECT * FROM qr_designs
WHERE workspace_id = sqlc.arg(workspace_id) AND link_id = ANY(sqlc.arg(link_ids)::uuid[]);

-- name: QRDesignUpsertLink :one
INSERT INTO qr_designs (workspace_id, link_id, fg, bg, ecc, margin, modules, logo_png, logo_width, logo_height, frame_text, frame_color)
VALUES (sqlc.arg(workspace_id), sqlc.arg(link_id), sqlc.arg(fg), sqlc.arg(bg), sqlc.arg(ecc), sqlc.arg(margin), sqlc.arg(modules),
        sqlc.narg(logo_png), sqlc.narg(logo_width), sqlc.narg(logo_height), sqlc.narg(frame_text), sqlc.narg(frame_color))
ON CONFLICT (link_id) WHERE link_id IS NOT NULL DO UPDATE
SET fg = excluded.fg, bg = excluded.bg, ecc = excluded.ecc, margin = excluded.margin, modules = excluded.modules,
    logo_png = excluded.logo_png, logo_width = excluded.logo_width, logo_height = excluded.logo_height,
    frame_text = excluded.frame_text, frame_color = excluded.frame_color, updated_at = now()
WHERE qr_designs.workspace_id = excluded.workspace_id
RETURNING *;

-- name: QRDesignUpsertDefault :one
INSERT INTO qr_designs (workspace_id, link_id, fg, bg, ecc, margin, modules, logo_png, logo_width, logo_height, frame_text, frame_color)
VALUES (sqlc.arg(workspace_id), NULL, sqlc.arg(fg), sqlc.arg(bg), sqlc.arg(ecc), sqlc.arg(margin), sqlc.arg(modules),
        sqlc.narg(logo_png), sqlc.narg(logo_width), sqlc.narg(logo_height), sqlc.narg(frame_text), sqlc.narg(frame_color))
ON CONFLICT (workspace_id) WHERE link_id IS NULL DO UPDATE
SET fg = excluded.fg, bg = excluded.bg, ecc = excluded.ecc, margin = excluded.margin, modules = excluded.modules,
    logo_png = excluded.logo_png, logo_width = excluded.logo_width, logo_height = excluded.logo_height,
    frame_text = excluded.frame_text, frame_color = excluded.frame_color, updated_at = now()
RETURNING *;

-- name: QRDesignDeleteLink :execrows
DELETE FROM qr_designs WHERE workspace_id = $1 AND link_id = $2;
