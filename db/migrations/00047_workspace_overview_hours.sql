-- +goose Up
-- The workspace overview in a time zone (docs/ui.md "Overview",
-- docs/scan-pipeline.md "The overview in a time zone"). The
-- overview read scan_workspace_days only, one row per workspace, UTC day and
-- key, so it could cut whole UTC days only. A local day (Asia/Kolkata's
-- starts at 18:30 UTC) is a suffix of one UTC day and a prefix of the next,
-- cut inside an hour for zones off the whole hour; so the fold now also
-- keeps, per workspace and UTC hour, the human scans of each country (dim
-- c) and source (dim s) with the counts before the quarter marks, as
-- scan_rollups does per link (migration 00044):
--   scans_15/30/45  human scans in the hour's first 15, 30, 45 minutes.
-- The overview reads:
--   the series      the hours of the range, dim s (the sources of an hour
--                   add up to its scans), cut at local midnights;
--   countries,      whole UTC days from scan_workspace_days, and the range's
--   sources         partial UTC days at its two ends from these hours;
--   top links       whole UTC days from scan_workspace_days, the partial
--                   days from scan_rollups' per-link hours (no per-link rows
--                   here: they would double the fold's rows per link).
-- The primary key leads with (workspace_id, dim, hour), so the series reads
-- the source rows of its hours as one range and never a country row.
--
-- The table is the sum of its workspace's links' hourly breakdowns, as
-- scan_workspace_days is of the daily ones; so that a rebuild of one link
-- can take its part out and add the recomputed part back, the hourly
-- breakdowns keep the same counts before the quarter marks (for every
-- dim: the fold computes them alike).
ALTER TABLE scan_rollup_keys_hourly
    ADD COLUMN scans_15 bigint NOT NULL DEFAULT 0,
    ADD COLUMN scans_30 bigint NOT NULL DEFAULT 0,
    ADD COLUMN scans_45 bigint NOT NULL DEFAULT 0;

CREATE TABLE scan_workspace_hours (
    workspace_id uuid        NOT NULL,
    dim          text        NOT NULL CHECK (dim IN ('c', 's')),
    hour         timestamptz NOT NULL, -- start of the UTC hour
    key          text        NOT NULL,
    scans        bigint      NOT NULL,
    scans_15     bigint      NOT NULL,
    scans_30     bigint      NOT NULL,
    scans_45     bigint      NOT NULL,
    PRIMARY KEY (workspace_id, dim, hour, key)
) WITH (fillfactor = 70);

-- scan_workspace_hours_add adds (sign 1) or takes away (sign -1) the
-- overview's hours of one link (NULL: every link) as its hourly breakdowns
-- hold them now. A row taken to zero stays (the rebuild adds most back at
-- once); the overview's reads skip rows without scans.
-- +goose StatementBegin
CREATE FUNCTION scan_workspace_hours_add(only_link uuid, sign integer) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO scan_workspace_hours AS w (workspace_id, dim, hour, key, scans, scans_15, scans_30, scans_45)
    SELECT workspace_id, dim, hour, key, sign * sum(scans), sign * sum(scans_15), sign * sum(scans_30), sign * sum(scans_45)
    FROM scan_rollup_keys_hourly
    WHERE dim IN ('c', 's') AND (only_link IS NULL OR link_id = only_link)
    GROUP BY 1, 2, 3, 4
    ON CONFLICT (workspace_id, dim, hour, key) DO UPDATE SET
        scans = w.scans + excluded.scans,
        scans_15 = w.scans_15 + excluded.scans_15,
        scans_30 = w.scans_30 + excluded.scans_30,
        scans_45 = w.scans_45 + excluded.scans_45;
END
$$;
-- +goose StatementEnd

-- What was folded before this release, under the fold lock (a fold that
-- comes meanwhile skips its turn, so none is counted twice or missed). The
-- hourly breakdowns know the hour only: each hour's countries and sources
-- are placed in its first quarter, as migration 00044 placed the hour's
-- scans in scan_rollups, so the overview and a link's page agree. Exact
-- for UTC and whole-hour zones; in a zone off the whole hour, the scans of
-- the hour a local midnight cuts count on the day before it until
-- `linkqr admin analytics rebuild` recomputes them from the raw scans
-- still kept. (The other breakdowns' counters stay 0 for those rows:
-- nothing reads them.)
SELECT pg_advisory_xact_lock(scan_fold_lock_key());
UPDATE scan_rollup_keys_hourly SET scans_15 = scans, scans_30 = scans, scans_45 = scans WHERE dim IN ('c', 's');
SELECT scan_workspace_hours_add(NULL, 1);

-- rebuild_scan_workspace_days (migration 00028), which a rebuild of every
-- link ends with, recomputes the overview's hours too.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION rebuild_scan_workspace_days() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(scan_fold_lock_key());
    UPDATE scan_fold_state SET version = version + 1;
    TRUNCATE scan_workspace_days, scan_workspace_hours;
    PERFORM scan_workspace_days_add(NULL, 1);
    PERFORM scan_workspace_hours_add(NULL, 1);
END
$$;
-- +goose StatementEnd

-- rebuild_scan_rollups as in 00044, with the hourly breakdowns' counts
-- before the quarter marks, and the overview's hours: the link's part of
-- them is taken away before its hourly breakdowns are recomputed and added
-- back after (of every link: recomputed whole), as for its days.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION rebuild_scan_rollups(only_link uuid) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    below xid8;
BEGIN
    PERFORM pg_advisory_xact_lock(scan_fold_lock_key());
    UPDATE scan_fold_state SET version = version + 1 RETURNING folded_below INTO below;

    IF only_link IS NULL AND NOT EXISTS (SELECT 1 FROM workspaces WHERE scans_purged_before IS NOT NULL) THEN
        TRUNCATE scan_visitor_days, scan_rollups, scan_rollup_keys_hourly, scan_rollup_keys_daily, scan_workspace_days, scan_workspace_hours;
    ELSE
        IF only_link IS NULL THEN
            TRUNCATE scan_workspace_days, scan_workspace_hours;
        ELSE
            PERFORM scan_workspace_days_add(only_link, -1);
            PERFORM scan_workspace_hours_add(only_link, -1);
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

    INSERT INTO scan_rollup_keys_hourly (link_id, hour, dim, key, workspace_id, scans, scans_15, scans_30, scans_45)
    SELECT s.link_id, s.hour, k.dim, k.key, s.workspace_id, count(*),
           count(*) FILTER (WHERE s.m < 15), count(*) FILTER (WHERE s.m < 30), count(*) FILTER (WHERE s.m < 45)
    FROM (
        SELECT s.link_id, s.workspace_id, s.device, s.os, s.browser, COALESCE(s.referrer_host, '(direct)') AS referrer,
               COALESCE(s.country, '(unknown)') AS country, s.source, COALESCE(s.variant, '(default)') AS variant,
               date_trunc('hour', s.occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
               extract(minute FROM s.occurred_at AT TIME ZONE 'UTC')::integer AS m
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
    PERFORM scan_workspace_hours_add(only_link, 1);

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
-- Rolling back would lose the overview's hours of the scans folded since.
-- +goose StatementBegin
DO $$ BEGIN RAISE EXCEPTION '00047_workspace_overview_hours cannot be rolled back; restore the backup taken before the upgrade'; END $$;
-- +goose StatementEnd
