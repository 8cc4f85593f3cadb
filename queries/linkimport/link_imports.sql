-- name: LinkImportLockWorkspace :exec
-- Serialises the uploads of one workspace while its quota is checked.
SELECT pg_advisory_xact_lock(hashtextextended('link_imports:' || sqlc.arg(workspace_id)::uuid::text, 0));

-- name: LinkImportUsage :one
-- A workspace's kept uploads: how many wait for confirmation, the bytes
-- of all of them, and when the first of them expires. Uploads still
-- arriving count for nothing until they are kept.
SELECT count(*) FILTER (WHERE state = 'uploaded')::integer AS pending,
       coalesce(sum(bytes), 0)::bigint AS bytes,
       coalesce(min(expires_at), now())::timestamptz AS first_expiry
FROM link_imports
WHERE workspace_id = $1 AND expires_at > now() AND state <> 'receiving';

-- name: LinkImportReceive :exec
-- An upload whose file is arriving: it expires within the hour unless
-- LinkImportKeep keeps it.
INSERT INTO link_imports (id, workspace_id, user_id, file_name, keep_codes, row_count, state, expires_at, codes_listed)
VALUES ($1, $2, $3, $4, true, 0, 'receiving', now() + interval '1 hour', true);

-- name: LinkImportAddChunk :exec
-- The next piece of an arriving upload's file.
INSERT INTO link_import_chunks (import_id, seq, data)
SELECT i.id, sqlc.arg(seq)::integer, sqlc.arg(data)::bytea FROM link_imports i
WHERE i.id = sqlc.arg(import_id) AND i.workspace_id = sqlc.arg(workspace_id) AND i.state = 'receiving';

-- name: LinkImportAddCodes :exec
-- A batch of an import's rows that keep a code of their own.
INSERT INTO link_import_codes (import_id, domain, code, row_number, expires_at)
SELECT i.id, c.domain, c.code, c.n, c.expires_at
FROM link_imports i, jsonb_to_recordset(sqlc.arg(codes)::jsonb) AS c(domain text, code text, n integer, expires_at timestamptz)
WHERE i.id = sqlc.arg(import_id) AND i.workspace_id = sqlc.arg(workspace_id)
ON CONFLICT DO NOTHING;

-- name: LinkImportCodesListed :exec
-- An import kept before its codes were listed has them now.
UPDATE link_imports SET codes_listed = true WHERE id = $1 AND workspace_id = $2;

-- name: LinkImportKeep :execrows
-- The whole file arrived and is an import: it waits for confirmation for a day.
UPDATE link_imports SET state = 'uploaded', keep_codes = $3, row_count = $4, bytes = $5, expires_at = now() + interval '1 day'
WHERE id = $1 AND workspace_id = $2 AND state = 'receiving';

-- name: LinkImportDiscard :exec
-- An arriving upload refused (its pieces and codes go by cascade).
DELETE FROM link_imports WHERE id = $1 AND workspace_id = $2 AND state = 'receiving';

-- name: LinkImportGet :one
-- An import of this workspace uploaded by this user, while it lasts.
SELECT id, workspace_id, user_id, file_name, keep_codes, row_count, state, processed, created, error, created_at, expires_at, finished_at, bytes, codes_listed
FROM link_imports
WHERE id = $1 AND workspace_id = $2 AND user_id = $3 AND expires_at > now() AND state <> 'receiving';

-- name: LinkImportChunk :one
-- A piece of a kept import's file; no row past the last.
SELECT c.data FROM link_import_chunks c JOIN link_imports i ON i.id = c.import_id
WHERE c.import_id = $1 AND i.workspace_id = $2 AND c.seq = $3;

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

-- name: LinkImportCodeCheck :many
-- For each of these (domain, code) pairs, whether it is taken (by a link
-- of any workspace, live or deleted, or retired with a purged workspace)
-- and the first row of this import that keeps it, among the rows still
-- valid at now (0: none). The domain "" is the default short domain.
SELECT p.domain::text AS domain, p.code::text AS code,
       ((p.domain = '' AND EXISTS (SELECT 1 FROM links l WHERE l.domain IS NULL AND l.code = p.code))
        OR (p.domain <> '' AND EXISTS (SELECT 1 FROM links l WHERE l.domain = p.domain AND l.code = p.code))
        OR EXISTS (SELECT 1 FROM retired_codes r WHERE r.domain = p.domain AND r.code = p.code))::boolean AS taken,
       coalesce((SELECT min(c.row_number) FROM link_import_codes c
                 WHERE c.import_id = sqlc.arg(import_id) AND c.domain = p.domain AND c.code = p.code
                   AND (c.expires_at IS NULL OR c.expires_at > sqlc.arg(now)::timestamptz)), 0)::integer AS first_row
FROM jsonb_to_recordset(sqlc.arg(pairs)::jsonb) AS p(domain text, code text);

-- name: LinkImportVerifiedDomains :many
SELECT hostname FROM domains WHERE workspace_id = $1 AND status = 'verified';
