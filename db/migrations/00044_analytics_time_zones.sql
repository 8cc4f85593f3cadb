-- +goose Up
-- Analytics in a time zone (docs/api.md "Analytics", docs/architecture.md
-- "Analytics at scale"): a workspace's zone, and rollups fine enough to cut
-- days and hours at any real zone's boundaries.
--
-- Whole-hour zones (New York, Berlin) cut at UTC hours: the hourly rollups
-- summed into local days answer them, uniques included (a UTC day's part in
-- a local day is a prefix or a suffix of its hours, counted by day_first /
-- day_last). Zones off the whole hour (Asia/Kolkata +5:30, Asia/Kathmandu
-- +5:45) cut inside an hour; every real offset is a multiple of 15 minutes,
-- so each hour row also keeps its counts at the quarter marks (prefix sums,
-- no extra rows: the fold's row count per scan is unchanged):
--   scans_15/30/45  human scans in the hour's first 15, 30, 45 minutes;
--   uniq_15/30/45   distinct visitors of the hour-long window starting 15,
--                   30, 45 minutes into the hour (a local hour off the UTC
--                   one), visitor-days counted apart as everywhere;
--   first_15/30/45  visitors whose first human scan of their UTC day falls
--                   in this hour before minute 15, 30, 45;
--   last_15/30/45   visitors whose last one falls in it at or after.
-- and each visitor-day its quarter-hours (bit q: minutes [15q, 15q+15) of
-- the UTC day): quarters_am for quarters 0-47, quarters_pm for 48-95.
ALTER TABLE workspaces
    ADD COLUMN timezone text NOT NULL DEFAULT 'UTC' CHECK (timezone <> '' AND length(timezone) <= 64);

ALTER TABLE scan_rollups
    ADD COLUMN scans_15 bigint NOT NULL DEFAULT 0,
    ADD COLUMN scans_30 bigint NOT NULL DEFAULT 0,
    ADD COLUMN scans_45 bigint NOT NULL DEFAULT 0,
    ADD COLUMN uniq_15  bigint NOT NULL DEFAULT 0,
    ADD COLUMN uniq_30  bigint NOT NULL DEFAULT 0,
    ADD COLUMN uniq_45  bigint NOT NULL DEFAULT 0,
    ADD COLUMN first_15 bigint NOT NULL DEFAULT 0,
    ADD COLUMN first_30 bigint NOT NULL DEFAULT 0,
    ADD COLUMN first_45 bigint NOT NULL DEFAULT 0,
    ADD COLUMN last_15  bigint NOT NULL DEFAULT 0,
    ADD COLUMN last_30  bigint NOT NULL DEFAULT 0,
    ADD COLUMN last_45  bigint NOT NULL DEFAULT 0;

ALTER TABLE scan_visitor_days
    ADD COLUMN quarters_am bigint NOT NULL DEFAULT 0,
    ADD COLUMN quarters_pm bigint NOT NULL DEFAULT 0;

-- What was folded before this release knows its hour only: it is placed in
-- the hour's first quarter (exact for whole-hour zones; zones off the hour
-- see those scans at :00-:15 until `linkqr admin analytics rebuild`
-- recomputes them from the raw scans still kept).
UPDATE scan_visitor_days v
SET quarters_am = (SELECT COALESCE(sum(1::bigint << (4 * h)), 0) FROM generate_series(0, 11) h WHERE v.hours & (1 << h) <> 0),
    quarters_pm = (SELECT COALESCE(sum(1::bigint << (4 * (h - 12))), 0) FROM generate_series(12, 23) h WHERE v.hours & (1 << h) <> 0);
INSERT INTO scan_rollups (link_id, hour, workspace_id, scans, bots, uniq, day_first, day_last)
SELECT link_id, hour - interval '1 hour', workspace_id, 0, 0, 0, 0, 0 FROM scan_rollups WHERE uniq > 0
ON CONFLICT (link_id, hour) DO NOTHING;
UPDATE scan_rollups r
SET scans_15 = r.scans, scans_30 = r.scans, scans_45 = r.scans,
    first_15 = r.day_first, first_30 = r.day_first, first_45 = r.day_first,
    uniq_15 = COALESCE(n.uniq, 0), uniq_30 = COALESCE(n.uniq, 0), uniq_45 = COALESCE(n.uniq, 0)
FROM scan_rollups r2 LEFT JOIN scan_rollups n ON n.link_id = r2.link_id AND n.hour = r2.hour + interval '1 hour'
WHERE r2.link_id = r.link_id AND r2.hour = r.hour;

-- rebuild_scan_rollups as in 00030, with the quarter-hour counters: the
-- visitor-days' quarters from the raw scans, and first/last seen from each
-- visitor-day's first and last scan.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION rebuild_scan_rollups(only_link uuid) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    below xid8;
BEGIN
    PERFORM pg_advisory_xact_lock(scan_fold_lock_key());
    UPDATE scan_fold_state SET version = version + 1 RETURNING folded_below INTO below;

    IF only_link IS NULL AND NOT EXISTS (SELECT 1 FROM workspaces WHERE scans_purged_before IS NOT NULL) THEN
        TRUNCATE scan_visitor_days, scan_rollups, scan_rollup_keys_hourly, scan_rollup_keys_daily, scan_workspace_days;
    ELSE
        IF only_link IS NULL THEN
            TRUNCATE scan_workspace_days;
        ELSE
            PERFORM scan_workspace_days_add(only_link, -1);
        END IF;
        DELETE FROM scan_visitor_days r USING workspaces w
        WHERE w.id = r.workspace_id AND (only_link IS NULL OR r.link_id = only_link)
          AND r.day >= (COALESCE(w.scans_purged_before, '-infinity') AT TIME ZONE 'UTC')::date;
        DELETE FROM scan_rollups r USING workspaces w
        WHERE w.id = r.workspace_id AND (only_link IS NULL OR r.link_id = only_link)
          AND r.hour >= COALESCE(w.scans_purged_before, '-infinity');
        DELETE FROM scan_rollup_keys_hourly r USING workspaces w
        WHERE w.id = r.workspace_id AND (only_link IS NULL OR r.link_id = only_link)
          AND r.hour >= COALESCE(w.scans_purged_before, '-infinity');
        DELETE FROM scan_rollup_keys_daily r USING workspaces w
        WHERE w.id = r.workspace_id AND (only_link IS NULL OR r.link_id = only_link)
          AND r.day >= (COALESCE(w.scans_purged_before, '-infinity') AT TIME ZONE 'UTC')::date;
    END IF;

    DROP TABLE IF EXISTS rebuild_scans;
    CREATE TEMPORARY TABLE rebuild_scans ON COMMIT DROP AS
    SELECT s.link_id, s.workspace_id, s.bot, s.visitor_hash, s.occurred_at,
           (s.occurred_at AT TIME ZONE 'UTC')::date AS day,
           date_trunc('hour', s.occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
           (extract(hour FROM s.occurred_at AT TIME ZONE 'UTC')::integer * 4
            + extract(minute FROM s.occurred_at AT TIME ZONE 'UTC')::integer / 15) AS q
    FROM scans s JOIN workspaces w ON w.id = s.workspace_id
    WHERE (only_link IS NULL OR s.link_id = only_link) AND (s.xid IS NULL OR s.xid < below)
      AND s.occurred_at >= COALESCE(w.scans_purged_before, '-infinity');

    INSERT INTO scan_visitor_days (link_id, day, visitor_hash, workspace_id, hours, quarters_am, quarters_pm)
    SELECT link_id, day, visitor_hash, workspace_id, bit_or(1 << (q / 4)),
           bit_or(CASE WHEN q < 48 THEN 1::bigint << q ELSE 0 END),
           bit_or(CASE WHEN q >= 48 THEN 1::bigint << (q - 48) ELSE 0 END)
    FROM rebuild_scans
    WHERE NOT bot
    GROUP BY link_id, workspace_id, day, visitor_hash;

    INSERT INTO scan_rollups (link_id, hour, workspace_id, scans, bots, uniq, day_first, day_last,
                              scans_15, scans_30, scans_45, uniq_15, uniq_30, uniq_45,
                              first_15, first_30, first_45, last_15, last_30, last_45)
    SELECT r.link_id, r.hour, r.workspace_id, sum(scans), sum(bots), sum(uniq), sum(day_first), sum(day_last),
           sum(scans_15), sum(scans_30), sum(scans_45), sum(uniq_15), sum(uniq_30), sum(uniq_45),
           sum(first_15), sum(first_30), sum(first_45), sum(last_15), sum(last_30), sum(last_45)
    FROM (
        SELECT link_id, workspace_id, hour,
               count(*) FILTER (WHERE NOT bot) AS scans,
               count(*) FILTER (WHERE bot) AS bots,
               count(DISTINCT visitor_hash) FILTER (WHERE NOT bot) AS uniq,
               0 AS day_first, 0 AS day_last,
               count(*) FILTER (WHERE NOT bot AND q % 4 < 1) AS scans_15,
               count(*) FILTER (WHERE NOT bot AND q % 4 < 2) AS scans_30,
               count(*) FILTER (WHERE NOT bot AND q % 4 < 3) AS scans_45,
               0 AS uniq_15, 0 AS uniq_30, 0 AS uniq_45,
               0 AS first_15, 0 AS first_30, 0 AS first_45, 0 AS last_15, 0 AS last_30, 0 AS last_45
        FROM rebuild_scans
        GROUP BY 1, 2, 3
        UNION ALL
        -- the hour-long windows starting 15, 30 and 45 minutes into each hour
        SELECT link_id, workspace_id, date_trunc('hour', (occurred_at - k * interval '15 minutes') AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
               0, 0, 0, 0, 0, 0, 0, 0,
               count(DISTINCT (day, visitor_hash)) FILTER (WHERE k = 1),
               count(DISTINCT (day, visitor_hash)) FILTER (WHERE k = 2),
               count(DISTINCT (day, visitor_hash)) FILTER (WHERE k = 3),
               0, 0, 0, 0, 0, 0
        FROM rebuild_scans CROSS JOIN generate_series(1, 3) k
        WHERE NOT bot
        GROUP BY 1, 2, 3
        UNION ALL
        -- each visitor-day's first and last scan
        SELECT link_id, workspace_id, date_trunc('hour', t AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
               0, 0, 0, count(*) FILTER (WHERE first), count(*) FILTER (WHERE NOT first), 0, 0, 0, 0, 0, 0,
               count(*) FILTER (WHERE first AND m < 15), count(*) FILTER (WHERE first AND m < 30), count(*) FILTER (WHERE first AND m < 45),
               count(*) FILTER (WHERE NOT first AND m >= 15), count(*) FILTER (WHERE NOT first AND m >= 30), count(*) FILTER (WHERE NOT first AND m >= 45)
        FROM (
            SELECT link_id, workspace_id, e.first, e.t, extract(minute FROM e.t AT TIME ZONE 'UTC')::integer AS m
            FROM (SELECT link_id, workspace_id, min(occurred_at) AS lo, max(occurred_at) AS hi
                  FROM rebuild_scans WHERE NOT bot GROUP BY link_id, workspace_id, day, visitor_hash) v
            CROSS JOIN LATERAL (VALUES (true, v.lo), (false, v.hi)) AS e(first, t)
        ) fl
        GROUP BY 1, 2, 3
    ) r JOIN workspaces w ON w.id = r.workspace_id
    WHERE r.hour >= COALESCE(w.scans_purged_before, '-infinity')
    GROUP BY r.link_id, r.workspace_id, r.hour;

    INSERT INTO scan_rollup_keys_hourly (link_id, hour, dim, key, workspace_id, scans)
    SELECT s.link_id, s.hour, k.dim, k.key, s.workspace_id, count(*)
    FROM (
        SELECT s.link_id, s.workspace_id, s.device, s.os, s.browser, COALESCE(s.referrer_host, '(direct)') AS referrer,
               COALESCE(s.country, '(unknown)') AS country, s.source, COALESCE(s.variant, '(default)') AS variant,
               date_trunc('hour', s.occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour
        FROM scans s JOIN workspaces w ON w.id = s.workspace_id
        WHERE NOT s.bot AND (only_link IS NULL OR s.link_id = only_link) AND (s.xid IS NULL OR s.xid < below)
          AND s.occurred_at >= COALESCE(w.scans_purged_before, '-infinity')
    ) s
    CROSS JOIN LATERAL (VALUES ('d', s.device), ('o', s.os), ('b', s.browser), ('r', s.referrer),
                               ('c', s.country), ('s', s.source), ('v', s.variant)) AS k(dim, key)
    GROUP BY s.link_id, s.hour, k.dim, k.key, s.workspace_id;

    INSERT INTO scan_rollup_keys_daily (link_id, day, dim, key, workspace_id, scans)
    SELECT r.link_id, (r.hour AT TIME ZONE 'UTC')::date, r.dim, r.key, r.workspace_id, sum(r.scans)
    FROM scan_rollup_keys_hourly r JOIN workspaces w ON w.id = r.workspace_id
    WHERE (only_link IS NULL OR r.link_id = only_link)
      AND r.hour >= COALESCE(w.scans_purged_before, '-infinity')
    GROUP BY 1, 2, 3, 4, 5;

    PERFORM scan_workspace_days_add(only_link, 1);

    UPDATE links l
    SET scan_count = COALESCE(c.scans, 0),
        last_scanned_at = COALESCE(c.last_at, CASE WHEN l.last_scanned_at < w.scans_purged_before THEN l.last_scanned_at END)
    FROM (SELECT l2.id,
                 (SELECT sum(r.scans) FROM scan_rollups r WHERE r.link_id = l2.id) AS scans,
                 (SELECT max(s.occurred_at) FROM scans s
                  WHERE s.link_id = l2.id AND NOT s.bot AND (s.xid IS NULL OR s.xid < below)
                    AND s.occurred_at >= COALESCE(w2.scans_purged_before, '-infinity')) AS last_at
          FROM links l2 JOIN workspaces w2 ON w2.id = l2.workspace_id
          WHERE only_link IS NULL OR l2.id = only_link) c,
         workspaces w
    WHERE l.id = c.id AND w.id = l.workspace_id;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- Rolling back would lose every workspace's zone and the quarter-hour counts.
-- +goose StatementBegin
DO $$ BEGIN RAISE EXCEPTION '00044_analytics_time_zones cannot be rolled back; restore the backup taken before the upgrade'; END $$;
-- +goose StatementEnd
