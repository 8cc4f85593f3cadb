-- name: ScanListByLink :many
SELECT id, link_id, occurred_at, referrer_host, device, os, browser, bot
FROM scans
WHERE link_id = $1 AND workspace_id = $2
  AND (sqlc.narg(before)::uuid IS NULL OR id < sqlc.narg(before)::uuid)
ORDER BY id DESC
LIMIT $3;

-- name: ScanListByLinkRange :many
-- A link's scans in [from, to), oldest first, in pages after the last
-- (occurred_at, id) of the previous page (scans_link_time_idx): the raw
-- scans CSV export streams these.
SELECT id, link_id, occurred_at, referrer_host, device, os, browser, bot
FROM scans
WHERE link_id = sqlc.arg(link_id) AND workspace_id = sqlc.arg(workspace_id)
  AND occurred_at >= sqlc.arg(from_time) AND occurred_at < sqlc.arg(to_time)
  AND (sqlc.narg(after_id)::uuid IS NULL OR (occurred_at, id) > (sqlc.arg(after_time)::timestamptz, sqlc.narg(after_id)::uuid))
ORDER BY occurred_at, id
LIMIT sqlc.arg(lim);

-- name: LinkAddScans :exec
-- Applied by the fold: adds each link's human scans of the window and
-- moves last_scanned_at forward.
UPDATE links l
SET scan_count = l.scan_count + u.scans,
    last_scanned_at = GREATEST(l.last_scanned_at, u.last_at)
FROM (SELECT unnest(sqlc.arg(link_ids)::uuid[]) AS id,
             unnest(sqlc.arg(counts)::bigint[]) AS scans,
             unnest(sqlc.arg(last_ats)::timestamptz[]) AS last_at) u
WHERE l.id = u.id;

-- name: ScanEnsurePartitions :exec
SELECT ensure_scan_partitions(sqlc.arg(start)::timestamptz, sqlc.arg(months)::integer);

-- name: ScanFoldLock :one
-- Only one fold runs at a time, across instances; a fold that finds the
-- lock taken leaves the queue to the one holding it.
SELECT pg_try_advisory_xact_lock(scan_fold_lock_key());

-- name: ScanFoldChunkEnd :one
-- The last link of the next range of about @rows queued scans after
-- @after: the fold takes the queue a range at a time, every scan of a link
-- in the same range, so its memory stays bounded whatever the backlog.
SELECT link_id FROM scan_fold_queue WHERE link_id > @after::uuid
ORDER BY link_id OFFSET @rows::integer LIMIT 1;

-- name: ScanFoldTake :many
-- Takes the queued scans of the links in (@after, @upto] (NULL: to the
-- end) that this snapshot sees (scans committed later stay for the next
-- fold), grouped so that repeats of one visitor, link, hour and key are
-- one row.
WITH taken AS (
    DELETE FROM scan_fold_queue
    WHERE link_id > @after::uuid AND (sqlc.narg(upto)::uuid IS NULL OR link_id <= sqlc.narg(upto)::uuid)
    RETURNING workspace_id, link_id, occurred_at, referrer_host, device, os, browser, bot, visitor_hash
)
SELECT link_id, workspace_id,
       (date_trunc('hour', occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')::timestamptz AS hour,
       bot, device, os, browser, referrer_host, visitor_hash,
       count(*)::bigint AS scans, max(occurred_at)::timestamptz AS last_at
FROM taken
GROUP BY link_id, workspace_id, 3, bot, device, os, browser, referrer_host, visitor_hash;

-- name: ScanFoldQueueVacuum :exec
-- Run after each fold, outside its transaction: the queue is emptied every
-- few seconds, and without this its dead rows would pile up until
-- autovacuum comes by, and every fold would read them again.
VACUUM scan_fold_queue;

-- name: ScanQueueCounts :many
-- The human scans of these links still in the fold queue: added to the
-- folded scan_count and last_scanned_at, they make both exact at this
-- snapshot.
SELECT link_id, count(*)::bigint AS scans, max(occurred_at)::timestamptz AS last_at
FROM scan_fold_queue WHERE link_id = ANY(@link_ids::uuid[]) AND NOT bot
GROUP BY link_id;

-- name: ScanQueueOldest :one
-- When the link's oldest queued scan occurred (no row: none queued): its
-- rollups are complete before that hour, and reports read raw scans from
-- it on.
SELECT occurred_at FROM scan_fold_queue WHERE link_id = @link_id ORDER BY occurred_at LIMIT 1;

-- name: ScanVisitorDaysUpsert :many
-- Adds the batch's hour bits to each (link, UTC day, visitor) and returns,
-- for every row whose bits changed, the bits before and after, from which
-- the fold derives the hourly unique, first-seen and last-seen counters.
-- The fold lock is held, so the snapshot's old bits are current.
WITH input AS (
    SELECT unnest(sqlc.arg(link_ids)::uuid[]) AS link_id, unnest(sqlc.arg(days)::date[]) AS day,
           unnest(sqlc.arg(visitor_hashes)::bytea[]) AS visitor_hash,
           unnest(sqlc.arg(workspace_ids)::uuid[]) AS workspace_id, unnest(sqlc.arg(hours)::integer[]) AS hours
), old AS (
    SELECT v.link_id, v.day, v.visitor_hash, v.hours
    FROM scan_visitor_days v JOIN input i USING (link_id, day, visitor_hash)
), up AS (
    INSERT INTO scan_visitor_days AS v (link_id, day, visitor_hash, workspace_id, hours)
    SELECT link_id, day, visitor_hash, workspace_id, hours FROM input
    ON CONFLICT (link_id, day, visitor_hash) DO UPDATE SET hours = v.hours | excluded.hours
    WHERE v.hours | excluded.hours <> v.hours
    RETURNING v.link_id, v.day, v.visitor_hash, v.hours
)
SELECT up.link_id, up.day, COALESCE(old.hours, 0)::integer AS old_hours, up.hours::integer AS new_hours
FROM up LEFT JOIN old USING (link_id, day, visitor_hash);

-- name: ScanRollupsUpsert :exec
INSERT INTO scan_rollups AS r (link_id, hour, workspace_id, scans, bots, uniq, day_first, day_last)
SELECT unnest(sqlc.arg(link_ids)::uuid[]), unnest(sqlc.arg(hours)::timestamptz[]), unnest(sqlc.arg(workspace_ids)::uuid[]),
       unnest(sqlc.arg(scans)::bigint[]), unnest(sqlc.arg(bots)::bigint[]), unnest(sqlc.arg(uniq)::bigint[]),
       unnest(sqlc.arg(day_first)::bigint[]), unnest(sqlc.arg(day_last)::bigint[])
ON CONFLICT (link_id, hour) DO UPDATE SET
    scans = r.scans + excluded.scans,
    bots = r.bots + excluded.bots,
    uniq = r.uniq + excluded.uniq,
    day_first = r.day_first + excluded.day_first,
    day_last = r.day_last + excluded.day_last;

-- name: ScanRollupKeysHourlyUpsert :exec
INSERT INTO scan_rollup_keys_hourly AS r (link_id, hour, dim, key, workspace_id, scans)
SELECT unnest(sqlc.arg(link_ids)::uuid[]), unnest(sqlc.arg(hours)::timestamptz[]), unnest(sqlc.arg(dims)::text[]),
       unnest(sqlc.arg(keys)::text[]), unnest(sqlc.arg(workspace_ids)::uuid[]), unnest(sqlc.arg(scans)::bigint[])
ON CONFLICT (link_id, hour, dim, key) DO UPDATE SET scans = r.scans + excluded.scans;

-- name: ScanRollupKeysDailyUpsert :exec
INSERT INTO scan_rollup_keys_daily AS r (link_id, day, dim, key, workspace_id, scans)
SELECT unnest(sqlc.arg(link_ids)::uuid[]), unnest(sqlc.arg(days)::date[]), unnest(sqlc.arg(dims)::text[]),
       unnest(sqlc.arg(keys)::text[]), unnest(sqlc.arg(workspace_ids)::uuid[]), unnest(sqlc.arg(scans)::bigint[])
ON CONFLICT (link_id, day, dim, key) DO UPDATE SET scans = r.scans + excluded.scans;

-- name: ScanRollupsRebuild :exec
-- Recomputes the rollups of one link (NULL: all links) from raw scans.
SELECT rebuild_scan_rollups(sqlc.narg(link_id)::uuid);

-- name: ScanRollupLinks :many
-- Every link, for rebuilding the rollups one link at a time.
SELECT id FROM links WHERE sqlc.narg(link_id)::uuid IS NULL OR id = sqlc.narg(link_id)::uuid ORDER BY id;
