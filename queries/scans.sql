-- name: ScanListByLink :many
SELECT id, link_id, occurred_at, referrer_host, device, os, browser, bot
FROM scans
WHERE link_id = $1 AND workspace_id = $2
  AND (sqlc.narg(before)::uuid IS NULL OR id < sqlc.narg(before)::uuid)
ORDER BY id DESC
LIMIT $3;

-- name: LinkAddScans :many
-- Applied in the flush transaction of a batch: adds each link's human scans
-- and moves last_scanned_at forward.
UPDATE links l
SET scan_count = l.scan_count + u.scans,
    last_scanned_at = GREATEST(l.last_scanned_at, u.last_at)
FROM (SELECT unnest(sqlc.arg(link_ids)::uuid[]) AS id,
             unnest(sqlc.arg(counts)::bigint[]) AS scans,
             unnest(sqlc.arg(last_ats)::timestamptz[]) AS last_at) u
WHERE l.id = u.id
RETURNING l.*;

-- name: ScanEnsurePartitions :exec
SELECT ensure_scan_partitions(sqlc.arg(start)::timestamptz, sqlc.arg(months)::integer);
