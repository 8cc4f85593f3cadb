-- name: LinkImportLockWorkspace :exec
-- Serialises the uploads of one workspace while its quota is checked.
SELECT pg_advisory_xact_lock(hashtextextended('link_imports:' || sqlc.arg(workspace_id)::uuid::text, 0));

-- name: LinkImportUsage :one
-- A workspace's kept uploads: how many wait for confirmation, the bytes
-- of all of them, and when the first of them expires.
SELECT count(*) FILTER (WHERE state = 'uploaded')::integer AS pending,
       coalesce(sum(octet_length(content)), 0)::bigint AS bytes,
       coalesce(min(expires_at), now())::timestamptz AS first_expiry
FROM link_imports
WHERE workspace_id = $1 AND expires_at > now();

-- name: LinkImportCreate :exec
INSERT INTO link_imports (id, workspace_id, user_id, file_name, content, keep_codes, row_count)
VALUES ($1, $2, $3, $4, $5, $6, $7);

-- name: LinkImportGet :one
-- An import of this workspace uploaded by this user, while it lasts.
SELECT id, workspace_id, user_id, file_name, keep_codes, row_count, state, processed, created, error, created_at, expires_at, finished_at,
       octet_length(content)::bigint AS bytes
FROM link_imports
WHERE id = $1 AND workspace_id = $2 AND user_id = $3 AND expires_at > now();

-- name: LinkImportContent :one
SELECT content FROM link_imports WHERE id = $1 AND workspace_id = $2;

-- name: LinkImportQueue :one
-- The confirmation: only an uploaded import starts, once.
UPDATE link_imports SET state = 'queued'
WHERE id = $1 AND workspace_id = $2 AND user_id = $3 AND state = 'uploaded' AND expires_at > now()
RETURNING id, file_name, row_count, keep_codes;

-- name: LinkImportForWork :one
-- The job's import, locked while a chunk is written.
SELECT id, workspace_id, keep_codes, state, processed, created_at FROM link_imports
WHERE id = $1
FOR UPDATE;

-- name: LinkImportProgress :exec
UPDATE link_imports SET processed = $2, created = created + sqlc.arg(added)::integer
WHERE id = $1;

-- name: LinkImportFinish :exec
UPDATE link_imports SET state = sqlc.arg(state)::text, error = sqlc.narg(error), finished_at = now()
WHERE id = $1;

-- name: LinkImportAddRows :exec
-- A chunk's outcomes.
INSERT INTO link_import_rows (import_id, row_number, outcome, message, link_id)
SELECT sqlc.arg(import_id), r.n, r.outcome, r.message, r.link_id
FROM jsonb_to_recordset(sqlc.arg(items)::jsonb) AS r(n integer, outcome text, message text, link_id uuid)
ON CONFLICT DO NOTHING;

-- name: LinkImportRows :many
-- A page of an import's outcomes, problems first, then by row.
SELECT row_number, outcome, message, link_id FROM link_import_rows
WHERE import_id = $1
ORDER BY (outcome = 'created'), row_number
LIMIT sqlc.arg(lim) OFFSET sqlc.arg(off);

-- name: LinkImportCounts :many
SELECT outcome, count(*) AS n FROM link_import_rows WHERE import_id = $1 GROUP BY outcome;

-- name: LinkImportTaken :many
-- Which of these (domain, code) pairs are taken: by a link of any
-- workspace (live or deleted) or retired with a purged workspace. The
-- domain "" is the default short domain.
SELECT p.domain::text AS domain, p.code::text AS code
FROM jsonb_to_recordset(sqlc.arg(pairs)::jsonb) AS p(domain text, code text)
WHERE (p.domain = '' AND EXISTS (SELECT 1 FROM links l WHERE l.domain IS NULL AND l.code = p.code))
   OR (p.domain <> '' AND EXISTS (SELECT 1 FROM links l WHERE l.domain = p.domain AND l.code = p.code))
   OR EXISTS (SELECT 1 FROM retired_codes r WHERE r.domain = p.domain AND r.code = p.code);

-- name: LinkImportVerifiedDomains :many
SELECT hostname FROM domains WHERE workspace_id = $1 AND status = 'verified';
