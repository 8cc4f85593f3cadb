-- +goose Up
-- The scan writer no longer maintains the analytics rollups in the
-- transaction of each batch: with many links almost every scan was its own
-- upsert in four tables and the redirect halved (docs/scan-pipeline.md).
-- It appends each scan to scans and to scan_fold_queue; a folder
-- (scan.Fold, run every few seconds by one instance at a time) takes the
-- queue link range by link range with DELETE … RETURNING and adds it to the
-- rollups and to links.scan_count set-based, so scans of one link, hour and
-- key that arrive within a window cost one row update together. Every
-- committed scan is in exactly one of the queue and the rollups, so reads
-- that add a link's queued scans to its rollups are exact at any moment.

-- Scans recorded but not yet folded. The index serves the reads of one
-- link's queued scans (its scan_count, its analytics) and the fold's link
-- ranges.
CREATE TABLE scan_fold_queue (
    workspace_id  uuid        NOT NULL,
    link_id       uuid        NOT NULL,
    occurred_at   timestamptz NOT NULL,
    referrer_host text,
    device        text        NOT NULL,
    os            text        NOT NULL,
    browser       text        NOT NULL,
    bot           boolean     NOT NULL,
    visitor_hash  bytea       NOT NULL
);
CREATE INDEX scan_fold_queue_link ON scan_fold_queue (link_id, occurred_at);

-- The fold updates the same rollup rows window after window (and each
-- link's scan_count): free room on every page lets PostgreSQL make those
-- HOT updates, with no new index entry per update. Tables rewritten by a
-- later VACUUM FULL or new pages get the room; old pages as they are.
ALTER TABLE scan_rollups SET (fillfactor = 70);
ALTER TABLE scan_rollup_keys_hourly SET (fillfactor = 70);
ALTER TABLE scan_rollup_keys_daily SET (fillfactor = 70);
ALTER TABLE scan_visitor_days SET (fillfactor = 80);
ALTER TABLE links SET (fillfactor = 80);

-- The advisory lock that serialises folds (across instances) and rebuilds.
-- +goose StatementBegin
CREATE FUNCTION scan_fold_lock_key() RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 7812354044217913156::bigint $$;
-- +goose StatementEnd

-- rebuild_scan_rollups recomputes every rollup of one link (NULL: of all
-- links), its scan_count and last_scanned_at from raw scans. It takes the
-- fold lock, so no fold runs meanwhile, and drops the link's unfolded queue
-- rows, whose scans the raw scans already hold. The caller must run it in a
-- REPEATABLE READ transaction: every statement then sees the same scans,
-- and a scan committed during the rebuild stays in the queue for the next
-- fold instead of being counted twice or not at all.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION rebuild_scan_rollups(only_link uuid) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('transaction_isolation') <> 'repeatable read' THEN
        RAISE EXCEPTION 'rebuild_scan_rollups must run in a REPEATABLE READ transaction';
    END IF;
    PERFORM pg_advisory_xact_lock(scan_fold_lock_key());
    IF only_link IS NULL THEN
        DELETE FROM scan_fold_queue;
        TRUNCATE scan_visitor_days, scan_rollups, scan_rollup_keys_hourly, scan_rollup_keys_daily;
    ELSE
        DELETE FROM scan_fold_queue WHERE link_id = only_link;
        DELETE FROM scan_visitor_days WHERE link_id = only_link;
        DELETE FROM scan_rollups WHERE link_id = only_link;
        DELETE FROM scan_rollup_keys_hourly WHERE link_id = only_link;
        DELETE FROM scan_rollup_keys_daily WHERE link_id = only_link;
    END IF;

    INSERT INTO scan_visitor_days (link_id, day, visitor_hash, workspace_id, hours)
    SELECT link_id, (occurred_at AT TIME ZONE 'UTC')::date, visitor_hash, workspace_id,
           bit_or(1 << extract(hour FROM occurred_at AT TIME ZONE 'UTC')::integer)
    FROM scans
    WHERE NOT bot AND (only_link IS NULL OR link_id = only_link)
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
        WHERE only_link IS NULL OR link_id = only_link
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
        WHERE NOT bot AND (only_link IS NULL OR link_id = only_link)
    ) s
    CROSS JOIN LATERAL (VALUES ('d', s.device), ('o', s.os), ('b', s.browser), ('r', s.referrer)) AS k(dim, key)
    GROUP BY s.link_id, s.hour, k.dim, k.key, s.workspace_id;

    INSERT INTO scan_rollup_keys_daily (link_id, day, dim, key, workspace_id, scans)
    SELECT link_id, (hour AT TIME ZONE 'UTC')::date, dim, key, workspace_id, sum(scans)
    FROM scan_rollup_keys_hourly
    WHERE only_link IS NULL OR link_id = only_link
    GROUP BY 1, 2, 3, 4, 5;

    -- scan_count and last_scanned_at count human scans, as the folder does.
    UPDATE links l
    SET scan_count = COALESCE(c.scans, 0),
        last_scanned_at = (SELECT max(s.occurred_at) FROM scans s WHERE s.link_id = l.id AND NOT s.bot)
    FROM (SELECT l2.id, (SELECT sum(r.scans) FROM scan_rollups r WHERE r.link_id = l2.id) AS scans
          FROM links l2 WHERE only_link IS NULL OR l2.id = only_link) c
    WHERE l.id = c.id;
END
$$;
-- +goose StatementEnd

DROP FUNCTION scan_rollup_lock_key(uuid);

-- +goose Down
ALTER TABLE scan_rollups RESET (fillfactor);
ALTER TABLE scan_rollup_keys_hourly RESET (fillfactor);
ALTER TABLE scan_rollup_keys_daily RESET (fillfactor);
ALTER TABLE scan_visitor_days RESET (fillfactor);
ALTER TABLE links RESET (fillfactor);
DROP FUNCTION scan_fold_lock_key();
DROP TABLE scan_fold_queue;
