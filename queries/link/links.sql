-- name: LinkCreate :one
INSERT INTO links (id, workspace_id, code, target_url, title, expires_at, domain, tags,
                   rules, split, password_hash, max_scans,
                   utm_source, utm_medium, utm_campaign, utm_term, utm_content)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, sqlc.narg(rules), sqlc.narg(split), sqlc.narg(password_hash), sqlc.narg(max_scans),
        sqlc.narg(utm_source), sqlc.narg(utm_medium), sqlc.narg(utm_campaign), sqlc.narg(utm_term), sqlc.narg(utm_content))
RETURNING *;

-- name: LinkCreateMany :many
-- A bulk creation's links in one statement: items is a JSON array of
-- {id, code, target_url, title, expires_at, domain, tags, rules, split,
-- max_scans, utm_source, utm_medium, utm_campaign, utm_term, utm_content}
-- (a password is never set in bulk). An item whose
-- code is taken (by a live or deleted link, another item of the batch, or
-- retired with a purged workspace) is skipped rather than failing the
-- statement: the caller reports (or retries) every id not returned.
INSERT INTO links (id, workspace_id, code, target_url, title, expires_at, domain, tags, rules, split, max_scans,
                   utm_source, utm_medium, utm_campaign, utm_term, utm_content)
SELECT i.id, sqlc.arg(workspace_id), i.code, i.target_url, i.title, i.expires_at, i.domain, i.tags, i.rules, i.split, i.max_scans,
       i.utm_source, i.utm_medium, i.utm_campaign, i.utm_term, i.utm_content
FROM jsonb_to_recordset(sqlc.arg(items)::jsonb)
     AS i(id uuid, code text, target_url text, title text, expires_at timestamptz, domain text, tags text[],
          rules jsonb, split jsonb, max_scans bigint,
          utm_source text, utm_medium text, utm_campaign text, utm_term text, utm_content text)
WHERE NOT EXISTS (SELECT 1 FROM retired_codes r WHERE r.domain = coalesce(i.domain, '') AND r.code = i.code)
ON CONFLICT DO NOTHING
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
SET target_url = $3, title = $4, status = $5, expires_at = $6, tags = $7, updated_at = now(),
    rules = sqlc.narg(rules), split = sqlc.narg(split), password_hash = sqlc.narg(password_hash),
    max_scans = sqlc.narg(max_scans),
    utm_source = sqlc.narg(utm_source), utm_medium = sqlc.narg(utm_medium), utm_campaign = sqlc.narg(utm_campaign),
    utm_term = sqlc.narg(utm_term), utm_content = sqlc.narg(utm_content),
    previous_target_url = CASE WHEN target_url <> $3 THEN target_url ELSE previous_target_url END,
    target_changed_at = CASE WHEN target_url <> $3 THEN now() ELSE target_changed_at END
WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL
RETURNING *;

-- name: LinkBulkEdit :one
-- One link of a bulk edit (link.Service.UpdateMany), its row locked by
-- LinkGetByIDForUpdate: the tags are added and removed here, on the row as
-- it is now, so two edits of one link at once never lose a tag. Sorted
-- bytewise, as ParseTags sorts them.
UPDATE links
SET status = @status, expires_at = sqlc.narg(expires_at), updated_at = now(),
    tags = ARRAY(
        SELECT DISTINCT (t COLLATE "C") FROM unnest(tags || @add_tags::text[]) AS u(t)
        WHERE t <> ALL (@remove_tags::text[]) ORDER BY 1)
WHERE id = @id AND workspace_id = @workspace_id AND deleted_at IS NULL
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
       (l.deleted_at IS NOT NULL OR w.deleted_at IS NOT NULL)::boolean AS gone,
       l.rules, l.split, l.password_hash, l.max_scans,
       (l.max_scans IS NOT NULL AND l.scans_granted >= l.max_scans)::boolean AS budget_granted,
       l.utm_source, l.utm_medium, l.utm_campaign, l.utm_term, l.utm_content
FROM links l JOIN workspaces w ON w.id = l.workspace_id
WHERE l.code = $1 AND l.domain IS NULL
UNION ALL
SELECT '00000000-0000-0000-0000-000000000000'::uuid, '00000000-0000-0000-0000-000000000000'::uuid,
       '', 'active', NULL::timestamptz, true, NULL::jsonb, NULL::jsonb, NULL::text, NULL::bigint, false,
       NULL::text, NULL::text, NULL::text, NULL::text, NULL::text
FROM retired_codes WHERE domain = '' AND code = $1
LIMIT 1;

-- name: LinkResolveDomainCode :one
-- LinkResolveCode for a code on a custom domain.
SELECT l.id, l.workspace_id, l.target_url, l.status, l.expires_at,
       (l.deleted_at IS NOT NULL OR w.deleted_at IS NOT NULL)::boolean AS gone,
       l.rules, l.split, l.password_hash, l.max_scans,
       (l.max_scans IS NOT NULL AND l.scans_granted >= l.max_scans)::boolean AS budget_granted,
       l.utm_source, l.utm_medium, l.utm_campaign, l.utm_term, l.utm_content
FROM links l JOIN workspaces w ON w.id = l.workspace_id
WHERE l.domain = sqlc.arg(domain)::text AND l.code = sqlc.arg(code)::text
UNION ALL
SELECT '00000000-0000-0000-0000-000000000000'::uuid, '00000000-0000-0000-0000-000000000000'::uuid,
       '', 'active', NULL::timestamptz, true, NULL::jsonb, NULL::jsonb, NULL::text, NULL::bigint, false,
       NULL::text, NULL::text, NULL::text, NULL::text, NULL::text
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

-- name: LinkScanBudgetForUpdate :one
-- A redirect instance reserves a block of a limited link's scan budget
-- (internal/redirect/budget.go) in one transaction: this locks the row,
-- so concurrent grants of all instances are ordered and add up to at most
-- max_scans, then LinkScanBudgetGrant records the block.
SELECT max_scans, scans_granted FROM links WHERE id = $1 FOR UPDATE;

-- name: LinkScanBudgetGrant :exec
UPDATE links SET scans_granted = scans_granted + sqlc.arg(n)::bigint WHERE id = sqlc.arg(id);

-- name: LinkReturnScans :exec
-- An instance gives back the unused part of its blocks (shutdown, or
-- another instance ran out), so other instances may serve it.
UPDATE links SET scans_granted = GREATEST(scans_granted - sqlc.arg(unused)::bigint, 0)
WHERE id = sqlc.arg(id);

-- name: LinkSearchTagged :many
-- LinkSearch of the links that have every tag of all_tags, driven by the
-- link_tags index of one of them (tag): an ordered index scan newest
-- first, however many links the workspace has, joined by primary key.
-- link_tags rows carry their link's workspace (the trigger writes them
-- from the link), so the workspace is checked there; checking it on links
-- too lets the planner, before statistics exist, scan the workspace's
-- links once per tag row.
SELECT l.* FROM link_tags t JOIN links l ON l.id = t.link_id
WHERE t.workspace_id = sqlc.arg(workspace_id) AND t.tag = sqlc.arg(tag)
  AND l.deleted_at IS NULL
  AND l.tags @> sqlc.arg(all_tags)::text[]
  AND (sqlc.narg(pattern)::text IS NULL
       OR (coalesce(l.title, '') || ' ' || l.code || ' ' || l.target_url) ILIKE sqlc.narg(pattern)::text)
  AND (sqlc.narg(state)::text IS NULL
       OR (sqlc.narg(state)::text = 'active' AND l.status = 'active' AND (l.expires_at IS NULL OR l.expires_at > now()))
       OR (sqlc.narg(state)::text = 'paused' AND l.status = 'paused')
       OR (sqlc.narg(state)::text = 'expired' AND l.expires_at <= now()))
  AND (sqlc.narg(domain)::text IS NULL OR l.domain = sqlc.narg(domain)::text)
  AND (sqlc.narg(ids)::uuid[] IS NULL OR l.id = ANY(sqlc.narg(ids)::uuid[]))
  AND (sqlc.narg(before)::uuid IS NULL OR t.link_id < sqlc.narg(before)::uuid)
ORDER BY t.link_id DESC
LIMIT sqlc.arg(lim);

-- name: LinkSearchTaggedCount :one
-- How many links LinkSearchTagged finds in all (every page).
SELECT count(*) FROM link_tags t JOIN links l ON l.id = t.link_id
WHERE t.workspace_id = sqlc.arg(workspace_id) AND t.tag = sqlc.arg(tag)
  AND l.deleted_at IS NULL
  AND l.tags @> sqlc.arg(all_tags)::text[]
  AND (sqlc.narg(pattern)::text IS NULL
       OR (coalesce(l.title, '') || ' ' || l.code || ' ' || l.target_url) ILIKE sqlc.narg(pattern)::text)
  AND (sqlc.narg(state)::text IS NULL
       OR (sqlc.narg(state)::text = 'active' AND l.status = 'active' AND (l.expires_at IS NULL OR l.expires_at > now()))
       OR (sqlc.narg(state)::text = 'paused' AND l.status = 'paused')
       OR (sqlc.narg(state)::text = 'expired' AND l.expires_at <= now()))
  AND (sqlc.narg(domain)::text IS NULL OR l.domain = sqlc.narg(domain)::text)
  AND (sqlc.narg(ids)::uuid[] IS NULL OR l.id = ANY(sqlc.narg(ids)::uuid[]));

-- name: LinkCounts :many
-- The counters the fold moves, of the links an instance holds in memory
-- (reads.go): refreshed with one query per fold, not one per read.
SELECT id, scan_count, last_scanned_at FROM links
WHERE id = ANY(sqlc.arg(ids)::uuid[]);
