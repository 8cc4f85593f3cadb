-- name: ScanListByLink :many
-- A link's scans, newest first, in pages before the last (occurred_at, id)
-- of the previous page: read backwards along scans_link_time_idx, the index
-- the reports and the export read too (one index less for every scan to
-- write, db/migrations/00021_scans_listed_by_time.sql).
SELECT id, link_id, occurred_at, referrer_host, device, os, browser, bot, country, source, variant
FROM scans
WHERE link_id = sqlc.arg(link_id) AND workspace_id = sqlc.arg(workspace_id)
  AND (sqlc.narg(before_id)::uuid IS NULL OR (occurred_at, id) < (sqlc.arg(before_time)::timestamptz, sqlc.narg(before_id)::uuid))
ORDER BY occurred_at DESC, id DESC
LIMIT sqlc.arg(lim);

-- name: ScanListByLinkRange :many
-- A link's scans in [from, to), oldest first, in pages after the last
-- (occurred_at, id) of the previous page (scans_link_time_idx): the raw
-- scans CSV export streams these.
SELECT id, link_id, occurred_at, referrer_host, device, os, browser, bot, country, source, variant
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
-- lock taken leaves the scans to the one holding it.
SELECT pg_try_advisory_xact_lock(scan_fold_lock_key());

-- name: ScanFoldState :one
-- The watermark (db/migrations/00020_scan_watermark.sql) as bigint, and
-- as_of: every scan of a transaction below it is folded.
SELECT folded_below::text::bigint AS folded_below, folded_at, version FROM scan_fold_state;

-- name: ScanFoldVersion :one
-- Moves with every change of the rollups: a report computed at a version
-- is the answer for as long as it stays.
SELECT version FROM scan_fold_state;

-- name: ScanFoldTarget :one
-- Where a fold that begins now may go (scan_fold_target), and the time to
-- report as as_of once it gets there. Run in a statement of its own,
-- before the statements that read the scans.
SELECT scan_fold_target()::bigint AS target, statement_timestamp()::timestamptz AS at;

-- name: ScanFoldChunkEnd :one
-- The end of the next chunk of about @rows scans in [@from_xid, @target_xid): the
-- first transaction after the one at offset @rows (@target_xid when fewer
-- remain), so the fold takes a backlog a chunk at a time in bounded memory
-- and never splits one transaction's scans.
SELECT COALESCE((
    SELECT min(n.xid) FROM scans n
    WHERE n.xid > (SELECT o.xid FROM scans o
                   WHERE o.xid >= (@from_xid::bigint)::text::xid8 AND o.xid < (@target_xid::bigint)::text::xid8
                   ORDER BY o.xid OFFSET @rows::integer LIMIT 1)
      AND n.xid < (@target_xid::bigint)::text::xid8
), (@target_xid::bigint)::text::xid8)::text::bigint AS chunk_end;

-- name: ScanFoldCount :one
-- How many scans the transactions in [@from_xid, @upto_xid) wrote.
SELECT count(*)::integer AS scans FROM scans
WHERE xid >= (@from_xid::bigint)::text::xid8 AND xid < (@upto_xid::bigint)::text::xid8;

-- name: ScanFoldTake :many
-- The scans of the transactions in [@from_xid, @upto_xid) of the links in
-- part @part of @parts (by their id's last byte, which is random), grouped
-- so that repeats of one visitor, link, quarter-hour and key are one row (a
-- fold window of a few seconds rarely spans two quarters, so this is hardly
-- more rows than per hour).
SELECT link_id, workspace_id,
       date_bin('15 minutes', occurred_at, '2000-01-01 00:00:00+00')::timestamptz AS quarter,
       bot, device, os, browser, referrer_host, country, source, variant, visitor_hash,
       count(*)::bigint AS scans, max(occurred_at)::timestamptz AS last_at
FROM scans
WHERE xid >= (@from_xid::bigint)::text::xid8 AND xid < (@upto_xid::bigint)::text::xid8
  AND get_byte(uuid_send(link_id), 15) % @parts::integer = @part::integer
GROUP BY link_id, workspace_id, 3, bot, device, os, browser, referrer_host, country, source, variant, visitor_hash;

-- name: ScanFoldAdvance :exec
-- Moves the watermark past a folded chunk, in the chunk's transaction;
-- as_of moves only when the fold reached its target.
UPDATE scan_fold_state
SET folded_below = (@upto_xid::bigint)::text::xid8,
    folded_at = COALESCE(sqlc.narg(at)::timestamptz, folded_at),
    version = version + 1;

-- name: ScanVisitorDaysUpsert :many
-- Adds the batch's hour and quarter-hour bits to each (link, UTC day,
-- visitor) and returns, for every row whose bits changed, the quarters
-- before and after, from which the fold derives the unique, first-seen and
-- last-seen counters. The fold lock is held, so the snapshot's old bits are
-- current.
WITH input AS (
    SELECT unnest(sqlc.arg(link_ids)::uuid[]) AS link_id, unnest(sqlc.arg(days)::date[]) AS day,
           unnest(sqlc.arg(visitor_hashes)::bytea[]) AS visitor_hash,
           unnest(sqlc.arg(workspace_ids)::uuid[]) AS workspace_id, unnest(sqlc.arg(hours)::integer[]) AS hours,
           unnest(sqlc.arg(quarters_am)::bigint[]) AS quarters_am, unnest(sqlc.arg(quarters_pm)::bigint[]) AS quarters_pm
), old AS (
    SELECT v.link_id, v.day, v.visitor_hash, v.quarters_am, v.quarters_pm
    FROM scan_visitor_days v JOIN input i USING (link_id, day, visitor_hash)
), up AS (
    INSERT INTO scan_visitor_days AS v (link_id, day, visitor_hash, workspace_id, hours, quarters_am, quarters_pm)
    SELECT link_id, day, visitor_hash, workspace_id, hours, quarters_am, quarters_pm FROM input
    ON CONFLICT (link_id, day, visitor_hash) DO UPDATE SET
        hours = v.hours | excluded.hours,
        quarters_am = v.quarters_am | excluded.quarters_am,
        quarters_pm = v.quarters_pm | excluded.quarters_pm
    WHERE v.quarters_am | excluded.quarters_am <> v.quarters_am OR v.quarters_pm | excluded.quarters_pm <> v.quarters_pm
    RETURNING v.link_id, v.day, v.visitor_hash, v.quarters_am, v.quarters_pm
)
SELECT up.link_id, up.day, COALESCE(old.quarters_am, 0)::bigint AS old_am, COALESCE(old.quarters_pm, 0)::bigint AS old_pm,
       up.quarters_am::bigint AS new_am, up.quarters_pm::bigint AS new_pm
FROM up LEFT JOIN old USING (link_id, day, visitor_hash);

-- name: ScanRollupsUpsert :exec
INSERT INTO scan_rollups AS r (link_id, hour, workspace_id, scans, bots, uniq, day_first, day_last, scans_15, scans_30, scans_45, uniq_15, uniq_30, uniq_45, first_15, first_30, first_45, last_15, last_30, last_45)
SELECT unnest(sqlc.arg(link_ids)::uuid[]), unnest(sqlc.arg(hours)::timestamptz[]), unnest(sqlc.arg(workspace_ids)::uuid[]),
       unnest(sqlc.arg(scans)::bigint[]),
       unnest(sqlc.arg(bots)::bigint[]),
       unnest(sqlc.arg(uniq)::bigint[]),
       unnest(sqlc.arg(day_first)::bigint[]),
       unnest(sqlc.arg(day_last)::bigint[]),
       unnest(sqlc.arg(scans_15)::bigint[]),
       unnest(sqlc.arg(scans_30)::bigint[]),
       unnest(sqlc.arg(scans_45)::bigint[]),
       unnest(sqlc.arg(uniq_15)::bigint[]),
       unnest(sqlc.arg(uniq_30)::bigint[]),
       unnest(sqlc.arg(uniq_45)::bigint[]),
       unnest(sqlc.arg(first_15)::bigint[]),
       unnest(sqlc.arg(first_30)::bigint[]),
       unnest(sqlc.arg(first_45)::bigint[]),
       unnest(sqlc.arg(last_15)::bigint[]),
       unnest(sqlc.arg(last_30)::bigint[]),
       unnest(sqlc.arg(last_45)::bigint[])
ON CONFLICT (link_id, hour) DO UPDATE SET
    scans = r.scans + excluded.scans,
    bots = r.bots + excluded.bots,
    uniq = r.uniq + excluded.uniq,
    day_first = r.day_first + excluded.day_first,
    day_last = r.day_last + excluded.day_last,
    scans_15 = r.scans_15 + excluded.scans_15,
    scans_30 = r.scans_30 + excluded.scans_30,
    scans_45 = r.scans_45 + excluded.scans_45,
    uniq_15 = r.uniq_15 + excluded.uniq_15,
    uniq_30 = r.uniq_30 + excluded.uniq_30,
    uniq_45 = r.uniq_45 + excluded.uniq_45,
    first_15 = r.first_15 + excluded.first_15,
    first_30 = r.first_30 + excluded.first_30,
    first_45 = r.first_45 + excluded.first_45,
    last_15 = r.last_15 + excluded.last_15,
    last_30 = r.last_30 + excluded.last_30,
    last_45 = r.last_45 + excluded.last_45;

-- name: ScanRollupKeysHourlyUpsert :exec
-- With the scans before the quarter marks (migration 00047).
INSERT INTO scan_rollup_keys_hourly AS r (link_id, hour, dim, key, workspace_id, scans, scans_15, scans_30, scans_45)
SELECT unnest(sqlc.arg(link_ids)::uuid[]), unnest(sqlc.arg(hours)::timestamptz[]), unnest(sqlc.arg(dims)::text[]),
       unnest(sqlc.arg(keys)::text[]), unnest(sqlc.arg(workspace_ids)::uuid[]), unnest(sqlc.arg(scans)::bigint[]),
       unnest(sqlc.arg(scans_15)::bigint[]), unnest(sqlc.arg(scans_30)::bigint[]), unnest(sqlc.arg(scans_45)::bigint[])
ON CONFLICT (link_id, hour, dim, key) DO UPDATE SET
    scans = r.scans + excluded.scans,
    scans_15 = r.scans_15 + excluded.scans_15,
    scans_30 = r.scans_30 + excluded.scans_30,
    scans_45 = r.scans_45 + excluded.scans_45;

-- name: ScanRollupKeysDailyUpsert :exec
INSERT INTO scan_rollup_keys_daily AS r (link_id, day, dim, key, workspace_id, scans)
SELECT unnest(sqlc.arg(link_ids)::uuid[]), unnest(sqlc.arg(days)::date[]), unnest(sqlc.arg(dims)::text[]),
       unnest(sqlc.arg(keys)::text[]), unnest(sqlc.arg(workspace_ids)::uuid[]), unnest(sqlc.arg(scans)::bigint[])
ON CONFLICT (link_id, day, dim, key) DO UPDATE SET scans = r.scans + excluded.scans;

-- name: ScanWorkspaceDaysUpsert :exec
-- The workspace overview's rows (db/migrations/00028_scan_country_source.sql).
INSERT INTO scan_workspace_days AS r (workspace_id, day, dim, key, scans)
SELECT unnest(sqlc.arg(workspace_ids)::uuid[]), unnest(sqlc.arg(days)::date[]), unnest(sqlc.arg(dims)::text[]),
       unnest(sqlc.arg(keys)::text[]), unnest(sqlc.arg(scans)::bigint[])
ON CONFLICT (workspace_id, day, dim, key) DO UPDATE SET scans = r.scans + excluded.scans;

-- name: ScanWorkspaceHoursUpsert :exec
-- The workspace overview's hours (db/migrations/00047_workspace_overview_hours.sql):
-- human scans per workspace, UTC hour, country (c) and source (s), with
-- those before the quarter marks.
INSERT INTO scan_workspace_hours AS r (workspace_id, dim, hour, key, scans, scans_15, scans_30, scans_45)
SELECT unnest(sqlc.arg(workspace_ids)::uuid[]), unnest(sqlc.arg(dims)::text[]), unnest(sqlc.arg(hours)::timestamptz[]),
       unnest(sqlc.arg(keys)::text[]), unnest(sqlc.arg(scans)::bigint[]), unnest(sqlc.arg(scans_15)::bigint[]),
       unnest(sqlc.arg(scans_30)::bigint[]), unnest(sqlc.arg(scans_45)::bigint[])
ON CONFLICT (workspace_id, dim, hour, key) DO UPDATE SET
    scans = r.scans + excluded.scans,
    scans_15 = r.scans_15 + excluded.scans_15,
    scans_30 = r.scans_30 + excluded.scans_30,
    scans_45 = r.scans_45 + excluded.scans_45;

-- name: ScanRollupsRebuild :exec
-- Recomputes the rollups of one link (NULL: all links) from raw scans.
SELECT rebuild_scan_rollups(sqlc.narg(link_id)::uuid);

-- name: ScanWorkspaceDaysRebuild :exec
-- Recomputes the workspace overview (its days and hours) from the per-link
-- daily and hourly rollups.
SELECT rebuild_scan_workspace_days();

-- name: ScanRollupLinks :many
-- Every link, for rebuilding the rollups one link at a time.
SELECT id FROM links WHERE sqlc.narg(link_id)::uuid IS NULL OR id = sqlc.narg(link_id)::uuid ORDER BY id;
