-- name: LinkCreate :one
INSERT INTO links (id, workspace_id, code, target_url, title, expires_at, domain)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING *;

-- name: LinkDomainForCreate :one
-- A link goes on a domain only while it is a verified domain of the
-- link's workspace. The share lock holds off the domain's removal (which
-- locks it for update, then counts its links) until the link is in.
SELECT hostname FROM domains
WHERE workspace_id = $1 AND hostname = $2 AND status = 'verified'
FOR SHARE;

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

-- name: LinkListByWorkspaceDomain :many
-- LinkListByWorkspace of the links on one custom domain.
SELECT * FROM links
WHERE workspace_id = $1 AND domain = $2 AND deleted_at IS NULL
  AND (sqlc.narg(before)::uuid IS NULL OR id < sqlc.narg(before)::uuid)
ORDER BY id DESC
LIMIT $3;

-- name: LinkUpdate :one
-- A new target keeps the old one (and when it changed) for the link page.
UPDATE links
SET target_url = $3, title = $4, status = $5, expires_at = $6, updated_at = now(),
    previous_target_url = CASE WHEN target_url <> $3 THEN target_url ELSE previous_target_url END,
    target_changed_at = CASE WHEN target_url <> $3 THEN now() ELSE target_changed_at END
WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL
RETURNING *;

-- name: LinkDelete :one
UPDATE links SET deleted_at = now(), updated_at = now()
WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL
RETURNING *;

-- name: LinkResolveCode :one
-- The redirect's cache miss: everything needed to answer GET /{code} on
-- the default domain. A link of a deleted workspace, or a code retired
-- when its workspace was purged, is gone (410) like a deleted link.
SELECT l.id, l.workspace_id, l.target_url, l.status, l.expires_at,
       (l.deleted_at IS NOT NULL OR w.deleted_at IS NOT NULL)::boolean AS gone
FROM links l JOIN workspaces w ON w.id = l.workspace_id
WHERE l.code = $1 AND l.domain IS NULL
UNION ALL
SELECT '00000000-0000-0000-0000-000000000000'::uuid, '00000000-0000-0000-0000-000000000000'::uuid,
       '', 'active', NULL::timestamptz, true
FROM retired_codes WHERE domain = '' AND code = $1
LIMIT 1;

-- name: LinkResolveDomainCode :one
-- LinkResolveCode for a code on a custom domain.
SELECT l.id, l.workspace_id, l.target_url, l.status, l.expires_at,
       (l.deleted_at IS NOT NULL OR w.deleted_at IS NOT NULL)::boolean AS gone
FROM links l JOIN workspaces w ON w.id = l.workspace_id
WHERE l.domain = sqlc.arg(domain)::text AND l.code = sqlc.arg(code)::text
UNION ALL
SELECT '00000000-0000-0000-0000-000000000000'::uuid, '00000000-0000-0000-0000-000000000000'::uuid,
       '', 'active', NULL::timestamptz, true
FROM retired_codes WHERE domain = sqlc.arg(domain)::text AND code = sqlc.arg(code)::text
LIMIT 1;

-- name: LinkSearch :many
-- The Links page: a workspace's live links, newest first, optionally only
-- those whose title, code or target contains a pattern (ILIKE, served by
-- links_search_idx; the expression must stay identical to the index's) and
-- of one state (active: redirecting now; paused; expired), on one
-- custom domain and among some ids (the QR ZIP's repeatable id).
SELECT * FROM links
WHERE workspace_id = sqlc.arg(workspace_id) AND deleted_at IS NULL
  AND (sqlc.narg(pattern)::text IS NULL
       OR (coalesce(title, '') || ' ' || code || ' ' || target_url) ILIKE sqlc.narg(pattern)::text)
  AND (sqlc.narg(state)::text IS NULL
       OR (sqlc.narg(state)::text = 'active' AND status = 'active' AND (expires_at IS NULL OR expires_at > now()))
       OR (sqlc.narg(state)::text = 'paused' AND status = 'paused')
       OR (sqlc.narg(state)::text = 'expired' AND expires_at <= now()))
  AND (sqlc.narg(domain)::text IS NULL OR domain = sqlc.narg(domain)::text)
  AND (sqlc.narg(ids)::uuid[] IS NULL OR id = ANY(sqlc.narg(ids)::uuid[]))
  AND (sqlc.narg(before)::uuid IS NULL OR id < sqlc.narg(before)::uuid)
ORDER BY id DESC
LIMIT sqlc.arg(lim);

-- name: LinkSearchCount :one
-- How many links LinkSearch finds in all (every page).
SELECT count(*) FROM links
WHERE workspace_id = sqlc.arg(workspace_id) AND deleted_at IS NULL
  AND (sqlc.narg(pattern)::text IS NULL
       OR (coalesce(title, '') || ' ' || code || ' ' || target_url) ILIKE sqlc.narg(pattern)::text)
  AND (sqlc.narg(state)::text IS NULL
       OR (sqlc.narg(state)::text = 'active' AND status = 'active' AND (expires_at IS NULL OR expires_at > now()))
       OR (sqlc.narg(state)::text = 'paused' AND status = 'paused')
       OR (sqlc.narg(state)::text = 'expired' AND expires_at <= now()))
  AND (sqlc.narg(domain)::text IS NULL OR domain = sqlc.narg(domain)::text)
  AND (sqlc.narg(ids)::uuid[] IS NULL OR id = ANY(sqlc.narg(ids)::uuid[]));

-- name: LinkListByIDs :many
-- The links of a scan batch's events (scan.created carries the link).
SELECT * FROM links WHERE id = ANY(sqlc.arg(ids)::uuid[]);
