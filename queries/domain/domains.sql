-- name: DomainCreate :one
INSERT INTO domains (id, workspace_id, hostname, verification_token)
VALUES ($1, $2, $3, $4)
RETURNING *;

-- name: DomainGetByID :one
SELECT * FROM domains WHERE id = $1 AND workspace_id = $2;

-- name: DomainGetByIDForUpdate :one
SELECT * FROM domains WHERE id = $1 AND workspace_id = $2 FOR UPDATE;

-- name: DomainListByWorkspace :many
-- Newest first; the cursor is the id of the last domain of the previous
-- page (UUIDv7, so id order is creation order).
SELECT * FROM domains
WHERE workspace_id = $1
  AND (sqlc.narg(before)::uuid IS NULL OR id < sqlc.narg(before)::uuid)
ORDER BY id DESC
LIMIT $2;

-- name: DomainCountByWorkspace :one
SELECT count(*) FROM domains WHERE workspace_id = $1;

-- name: DomainLockWorkspace :exec
-- Serialises the domain additions of one workspace, so two concurrent
-- adds cannot both pass the per-workspace limit. NO KEY UPDATE does not
-- block the foreign-key checks of other inserts.
SELECT id FROM workspaces WHERE id = $1 FOR NO KEY UPDATE;

-- name: DomainVerifiedElsewhere :one
-- Whether another workspace holds hostname verified.
SELECT EXISTS (
    SELECT 1 FROM domains WHERE hostname = $1 AND status = 'verified' AND workspace_id <> $2
);

-- name: DomainUpdateURLs :one
UPDATE domains
SET root_url = $3, not_found_url = $4, updated_at = now()
WHERE id = $1 AND workspace_id = $2
RETURNING *;

-- name: DomainRecordCheck :one
-- The outcome of one look at the TXT record. found: the token was there
-- (a pending domain becomes verified; a verified one's missing mark is
-- cleared); not found: a pending domain stays pending, a verified one
-- keeps working and remembers since when the record is missing.
UPDATE domains
SET status = CASE WHEN sqlc.arg(found)::boolean THEN 'verified' ELSE status END,
    verified_at = CASE WHEN sqlc.arg(found)::boolean THEN COALESCE(verified_at, sqlc.arg(checked_at)::timestamptz) ELSE verified_at END,
    record_missing_since = CASE
        WHEN sqlc.arg(found)::boolean OR status = 'pending' THEN NULL
        ELSE COALESCE(record_missing_since, sqlc.arg(checked_at)::timestamptz) END,
    last_checked_at = sqlc.arg(checked_at)::timestamptz,
    last_check_error = sqlc.narg(check_error)::text,
    updated_at = CASE WHEN sqlc.arg(found)::boolean AND status = 'pending' THEN now() ELSE updated_at END
WHERE id = $1 AND workspace_id = $2
RETURNING *;

-- name: DomainDelete :execrows
DELETE FROM domains WHERE id = $1 AND workspace_id = $2;

-- name: DomainListDue :many
-- The re-check job's batch: pending domains not looked at since
-- pending_before, verified ones not since verified_before, the longest
-- unchecked (never first) first.
SELECT * FROM domains
WHERE last_checked_at IS NULL
   OR (status = 'pending' AND last_checked_at < sqlc.arg(pending_before)::timestamptz)
   OR (status = 'verified' AND last_checked_at < sqlc.arg(verified_before)::timestamptz)
ORDER BY last_checked_at NULLS FIRST, id
LIMIT $1;

-- name: DomainLinkCount :one
-- The live links on a domain: while there are any it cannot be removed.
SELECT count(*) FROM links WHERE workspace_id = $1 AND domain = $2 AND deleted_at IS NULL;

-- name: DomainSites :many
-- Every verified domain of a live workspace: the names linkqr serves (and
-- obtains certificates for), as the redirect keeps them in memory.
SELECT d.hostname, d.workspace_id, d.root_url, d.not_found_url
FROM domains d JOIN workspaces w ON w.id = d.workspace_id
WHERE d.status = 'verified' AND w.deleted_at IS NULL;

-- name: DomainSite :one
-- DomainSites of one hostname.
SELECT d.hostname, d.workspace_id, d.root_url, d.not_found_url
FROM domains d JOIN workspaces w ON w.id = d.workspace_id
WHERE d.hostname = $1 AND d.status = 'verified' AND w.deleted_at IS NULL;
