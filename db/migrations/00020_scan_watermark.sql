-- +goose Up
-- The fold reads new scans straight from scans, from a watermark, instead of
-- a second copy of every scan in scan_fold_queue: the copy (a heap row and an
-- index entry per scan) cost as much PostgreSQL time as the scan itself
-- (docs/scan-pipeline.md).
--
-- The watermark is a transaction id. Every scan carries the id of the
-- transaction that wrote it (xid, set by its default), and the fold takes
-- the scans of the transactions in [folded_below, target), where target is
-- the oldest transaction still running when the fold began
-- (in this database): every transaction below it has ended, so each of its
-- scans is folded exactly once, however late it commits relative to others.
-- Scans written before this migration, and scans bulk-loaded with xid NULL
-- (fixtures, restores), are counted by rebuild_scan_rollups only.
ALTER TABLE scans ADD COLUMN xid xid8;
ALTER TABLE scans ALTER COLUMN xid SET DEFAULT pg_current_xact_id();
CREATE INDEX scans_xid_idx ON scans (xid);

-- One row: every scan of a transaction below folded_below is in the
-- rollups and the links' scan_count; folded_at is when the fold that set it
-- began, which answers carry as as_of. version moves with every change of
-- the rollups (each fold chunk, each rebuild): equal versions, equal
-- answers, so a report may be served again from memory.
CREATE TABLE scan_fold_state (
    singleton    boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
    folded_below xid8        NOT NULL,
    folded_at    timestamptz NOT NULL,
    version      bigint      NOT NULL DEFAULT 0
);
INSERT INTO scan_fold_state (folded_below, folded_at)
VALUES (pg_snapshot_xmin(pg_current_snapshot()), now());

-- scan_fold_target is where a fold that begins now may go: the oldest
-- transaction of this database still running, else the next transaction
-- id. Every transaction below it has ended, so a later statement sees all
-- their scans, and one that starts later gets a higher id. The snapshot is
-- taken before pg_stat_activity is read, so a transaction is either running
-- there or at/after xmax. Transactions of other databases on the cluster
-- do not hold the fold back (a transaction left open in this one does:
-- as_of then stops moving). pg_stat_activity shows 32-bit ids: each is
-- widened with xmax's epoch, one less if it would pass xmax.
-- +goose StatementBegin
CREATE FUNCTION scan_fold_target() RETURNS bigint
LANGUAGE sql VOLATILE AS $$
    WITH snap AS (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS xmax),
    running AS (
        SELECT ((snap.xmax >> 32) << 32) | a.backend_xid::text::bigint AS x, snap.xmax
        FROM pg_stat_activity a, snap
        WHERE a.datname = current_database() AND a.backend_xid IS NOT NULL AND a.pid <> pg_backend_pid()
    )
    SELECT LEAST((SELECT xmax FROM snap),
                 (SELECT min(CASE WHEN x > xmax THEN x - 4294967296 ELSE x END) FROM running))
$$;
-- +goose StatementEnd

-- rebuild_scan_rollups recomputes every rollup of one link (NULL: of all
-- links), its scan_count and last_scanned_at from the raw scans the folds
-- have passed (and those with no xid). It takes the fold lock, so no fold
-- runs meanwhile; scans above the watermark are left to the next fold,
-- which adds them once.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION rebuild_scan_rollups(only_link uuid) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    below xid8;
BEGIN
    PERFORM pg_advisory_xact_lock(scan_fold_lock_key());
    UPDATE scan_fold_state SET version = version + 1 RETURNING folded_below INTO below;
    IF only_link IS NULL THEN
        TRUNCATE scan_visitor_days, scan_rollups, scan_rollup_keys_hourly, scan_rollup_keys_daily;
    ELSE
        DELETE FROM scan_visitor_days WHERE link_id = only_link;
        DELETE FROM scan_rollups WHERE link_id = only_link;
        DELETE FROM scan_rollup_keys_hourly WHERE link_id = only_link;
        DELETE FROM scan_rollup_keys_daily WHERE link_id = only_link;
    END IF;

    INSERT INTO scan_visitor_days (link_id, day, visitor_hash, workspace_id, hours)
    SELECT link_id, (occurred_at AT TIME ZONE 'UTC')::date, visitor_hash, workspace_id,
           bit_or(1 << extract(hour FROM occurred_at AT TIME ZONE 'UTC')::integer)
    FROM scans
    WHERE NOT bot AND (only_link IS NULL OR link_id = only_link) AND (xid IS NULL OR xid < below)
    GROUP BY link_id, workspace_id, 2, visitor_hash;

    INSERT INTO scan_rollups (link_id, hour, workspace_id, scans, bots, uniq, day_first, day_last)
    SELECT link_id, hour, workspace_id, sum(scans), sum(bots), sum(uniq), sum(day_first), sum(day_last)
    FROM (
        SELECT link_id, workspace_id,
               date_trunc('hour', occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
               count(*) FILTER (WHERE NOT bot) AS scans,
               count(*) FILTER (WHERE bot) AS bots,
               count(DISTINCT visitor_hash) FILTER (WHERE NOT bot) AS uniq,
               0 AS day_first, 0 AS day_last
        FROM scans
        WHERE (only_link IS NULL OR link_id = only_link) AND (xid IS NULL OR xid < below)
        GROUP BY 1, 2, 3
        UNION ALL
        -- the lowest set bit is the first hour, the highest the last
        SELECT link_id, workspace_id,
               (day + (24 - position(B'1' IN (hours & -hours)::bit(24))) * interval '1 hour') AT TIME ZONE 'UTC',
               0, 0, 0, 1, 0
        FROM scan_visitor_days
        WHERE only_link IS NULL OR link_id = only_link
        UNION ALL
        SELECT link_id, workspace_id,
               (day + (24 - position(B'1' IN hours::bit(24))) * interval '1 hour') AT TIME ZONE 'UTC',
               0, 0, 0, 0, 1
        FROM scan_visitor_days
        WHERE only_link IS NULL OR link_id = only_link
    ) r
    GROUP BY link_id, workspace_id, hour;

    INSERT INTO scan_rollup_keys_hourly (link_id, hour, dim, key, workspace_id, scans)
    SELECT s.link_id, s.hour, k.dim, k.key, s.workspace_id, count(*)
    FROM (
        SELECT link_id, workspace_id, device, os, browser, COALESCE(referrer_host, '(direct)') AS referrer,
               date_trunc('hour', occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour
        FROM scans
        WHERE NOT bot AND (only_link IS NULL OR link_id = only_link) AND (xid IS NULL OR xid < below)
    ) s
    CROSS JOIN LATERAL (VALUES ('d', s.device), ('o', s.os), ('b', s.browser), ('r', s.referrer)) AS k(dim, key)
    GROUP BY s.link_id, s.hour, k.dim, k.key, s.workspace_id;

    INSERT INTO scan_rollup_keys_daily (link_id, day, dim, key, workspace_id, scans)
    SELECT link_id, (hour AT TIME ZONE 'UTC')::date, dim, key, workspace_id, sum(scans)
    FROM scan_rollup_keys_hourly
    WHERE only_link IS NULL OR link_id = only_link
    GROUP BY 1, 2, 3, 4, 5;

    -- scan_count and last_scanned_at count human scans, as the fold does.
    UPDATE links l
    SET scan_count = COALESCE(c.scans, 0), last_scanned_at = c.last_at
    FROM (SELECT l2.id,
                 (SELECT sum(r.scans) FROM scan_rollups r WHERE r.link_id = l2.id) AS scans,
                 (SELECT max(s.occurred_at) FROM scans s
                  WHERE s.link_id = l2.id AND NOT s.bot AND (s.xid IS NULL OR s.xid < below)) AS last_at
          FROM links l2 WHERE only_link IS NULL OR l2.id = only_link) c
    WHERE l.id = c.id;
END
$$;
-- +goose StatementEnd

-- Scans still queued were never folded: their links are rebuilt from raw
-- scans (all of which predate the watermark) before the queue goes.
SELECT rebuild_scan_rollups(link_id) FROM (SELECT DISTINCT link_id FROM scan_fold_queue) q;
DROP TABLE scan_fold_queue;

-- +goose Down
-- Not reversible: the previous release folds from scan_fold_queue, and its
-- rebuild function would have to come back with it. Restore a backup
-- taken before the upgrade instead.
-- +goose StatementBegin
DO $$ BEGIN RAISE EXCEPTION '00020_scan_watermark cannot be rolled back; restore the backup taken before the upgrade'; END $$;
-- +goose StatementEnd
