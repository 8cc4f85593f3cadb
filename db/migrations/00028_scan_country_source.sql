-- +goose Up
-- Where and how people scan (docs/scan-pipeline.md, "Country and source"):
-- every scan records its visitor's country (ISO 3166-1 alpha-2, NULL when it
-- could not be told) and its source ('qr' when the short URL was opened
-- with the ?qr=1 that QR codes carry, else 'link'). Both are metadata-only
-- column additions: existing scans read as country NULL, source 'link'.
ALTER TABLE scans
    ADD COLUMN country text,
    ADD COLUMN source  text NOT NULL DEFAULT 'link';

-- Two more breakdowns in the rollups: c country ("(unknown)" without
-- one), s source.
ALTER TABLE scan_rollup_keys_hourly DROP CONSTRAINT scan_rollup_keys_hourly_dim_check;
ALTER TABLE scan_rollup_keys_hourly ADD CONSTRAINT scan_rollup_keys_hourly_dim_check
    CHECK (dim IN ('d', 'o', 'b', 'r', 'c', 's')) NOT VALID;
ALTER TABLE scan_rollup_keys_hourly VALIDATE CONSTRAINT scan_rollup_keys_hourly_dim_check;
ALTER TABLE scan_rollup_keys_daily DROP CONSTRAINT scan_rollup_keys_daily_dim_check;
ALTER TABLE scan_rollup_keys_daily ADD CONSTRAINT scan_rollup_keys_daily_dim_check
    CHECK (dim IN ('d', 'o', 'b', 'r', 'c', 's')) NOT VALID;
ALTER TABLE scan_rollup_keys_daily VALIDATE CONSTRAINT scan_rollup_keys_daily_dim_check;

-- Every human scan folded so far is an unknown-country link scan: the new
-- breakdowns start with them, so that countries and sources add up to the
-- total in every range, those before the retention horizon included.
INSERT INTO scan_rollup_keys_hourly (link_id, hour, dim, key, workspace_id, scans)
SELECT r.link_id, r.hour, k.dim, k.key, r.workspace_id, r.scans
FROM scan_rollups r CROSS JOIN (VALUES ('c', '(unknown)'), ('s', 'link')) AS k(dim, key)
WHERE r.scans > 0;
INSERT INTO scan_rollup_keys_daily (link_id, day, dim, key, workspace_id, scans)
SELECT r.link_id, (r.hour AT TIME ZONE 'UTC')::date, k.dim, k.key, r.workspace_id, sum(r.scans)
FROM scan_rollups r CROSS JOIN (VALUES ('c', '(unknown)'), ('s', 'link')) AS k(dim, key)
WHERE r.scans > 0
GROUP BY 1, 2, 3, 4, 5;

-- The workspace overview (all links: scans per day, top links, top
-- countries, sources) reads one row per workspace, UTC day and key, kept
-- by the fold beside the per-link rollups: dim l is a link (key: its
-- uuid), c a country, s a source. Summing the per-link daily rollups of
-- 10,000 links instead would read millions of rows per answer.
CREATE TABLE scan_workspace_days (
    workspace_id uuid   NOT NULL,
    day          date   NOT NULL,
    dim          text   NOT NULL CHECK (dim IN ('l', 'c', 's')),
    key          text   NOT NULL,
    scans        bigint NOT NULL,
    PRIMARY KEY (workspace_id, day, dim, key)
) WITH (fillfactor = 70);

INSERT INTO scan_workspace_days (workspace_id, day, dim, key, scans)
SELECT workspace_id, day, dim, key, sum(scans) FROM (
    SELECT workspace_id, day, dim, key, scans FROM scan_rollup_keys_daily WHERE dim IN ('c', 's')
    UNION ALL
    SELECT workspace_id, day, 'l', link_id::text, scans FROM scan_rollup_keys_daily WHERE dim = 's'
) x
GROUP BY 1, 2, 3, 4;

-- scan_workspace_days_add adds (sign 1) or takes away (sign -1) the
-- overview rows of one link (NULL: every link) as its daily rollups hold
-- them now. A row taken to zero stays (the rebuild adds most back at
-- once); the overview's reads skip rows without scans.
-- +goose StatementBegin
CREATE FUNCTION scan_workspace_days_add(only_link uuid, sign integer) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO scan_workspace_days AS w (workspace_id, day, dim, key, scans)
    SELECT workspace_id, day, dim, key, sign * sum(scans) FROM (
        SELECT workspace_id, day, dim, key, scans FROM scan_rollup_keys_daily
        WHERE dim IN ('c', 's') AND (only_link IS NULL OR link_id = only_link)
        UNION ALL
        SELECT workspace_id, day, 'l', link_id::text, scans FROM scan_rollup_keys_daily
        WHERE dim = 's' AND (only_link IS NULL OR link_id = only_link)
    ) x
    GROUP BY 1, 2, 3, 4
    ON CONFLICT (workspace_id, day, dim, key) DO UPDATE SET scans = w.scans + excluded.scans;
END
$$;
-- +goose StatementEnd

-- rebuild_scan_workspace_days recomputes the whole overview from the
-- per-link daily rollups, under the fold lock: what a rebuild of every link
-- ends with, so that it also repairs overview rows that went wrong apart
-- from the per-link rollups (a per-link rebuild only moves its own part).
-- +goose StatementBegin
CREATE FUNCTION rebuild_scan_workspace_days() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(scan_fold_lock_key());
    UPDATE scan_fold_state SET version = version + 1;
    TRUNCATE scan_workspace_days;
    PERFORM scan_workspace_days_add(NULL, 1);
END
$$;
-- +goose StatementEnd

-- rebuild_scan_rollups as in 00024, with the country and source breakdowns,
-- and the workspace overview: the link's part of it is taken away before
-- its daily rollups are recomputed and added back after.
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

    INSERT INTO scan_visitor_days (link_id, day, visitor_hash, workspace_id, hours)
    SELECT s.link_id, (s.occurred_at AT TIME ZONE 'UTC')::date, s.visitor_hash, s.workspace_id,
           bit_or(1 << extract(hour FROM s.occurred_at AT TIME ZONE 'UTC')::integer)
    FROM scans s JOIN workspaces w ON w.id = s.workspace_id
    WHERE NOT s.bot AND (only_link IS NULL OR s.link_id = only_link) AND (s.xid IS NULL OR s.xid < below)
      AND s.occurred_at >= COALESCE(w.scans_purged_before, '-infinity')
    GROUP BY s.link_id, s.workspace_id, 2, s.visitor_hash;

    INSERT INTO scan_rollups (link_id, hour, workspace_id, scans, bots, uniq, day_first, day_last)
    SELECT link_id, hour, workspace_id, sum(scans), sum(bots), sum(uniq), sum(day_first), sum(day_last)
    FROM (
        SELECT s.link_id, s.workspace_id,
               date_trunc('hour', s.occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
               count(*) FILTER (WHERE NOT s.bot) AS scans,
               count(*) FILTER (WHERE s.bot) AS bots,
               count(DISTINCT s.visitor_hash) FILTER (WHERE NOT s.bot) AS uniq,
               0 AS day_first, 0 AS day_last
        FROM scans s JOIN workspaces w ON w.id = s.workspace_id
        WHERE (only_link IS NULL OR s.link_id = only_link) AND (s.xid IS NULL OR s.xid < below)
          AND s.occurred_at >= COALESCE(w.scans_purged_before, '-infinity')
        GROUP BY 1, 2, 3
        UNION ALL
        -- the lowest set bit is the first hour, the highest the last
        SELECT v.link_id, v.workspace_id,
               (v.day + (24 - position(B'1' IN (v.hours & -v.hours)::bit(24))) * interval '1 hour') AT TIME ZONE 'UTC',
               0, 0, 0, 1, 0
        FROM scan_visitor_days v JOIN workspaces w ON w.id = v.workspace_id
        WHERE (only_link IS NULL OR v.link_id = only_link)
          AND v.day >= (COALESCE(w.scans_purged_before, '-infinity') AT TIME ZONE 'UTC')::date
        UNION ALL
        SELECT v.link_id, v.workspace_id,
               (v.day + (24 - position(B'1' IN v.hours::bit(24))) * interval '1 hour') AT TIME ZONE 'UTC',
               0, 0, 0, 0, 1
        FROM scan_visitor_days v JOIN workspaces w ON w.id = v.workspace_id
        WHERE (only_link IS NULL OR v.link_id = only_link)
          AND v.day >= (COALESCE(w.scans_purged_before, '-infinity') AT TIME ZONE 'UTC')::date
    ) r
    GROUP BY link_id, workspace_id, hour;

    INSERT INTO scan_rollup_keys_hourly (link_id, hour, dim, key, workspace_id, scans)
    SELECT s.link_id, s.hour, k.dim, k.key, s.workspace_id, count(*)
    FROM (
        SELECT s.link_id, s.workspace_id, s.device, s.os, s.browser, COALESCE(s.referrer_host, '(direct)') AS referrer,
               COALESCE(s.country, '(unknown)') AS country, s.source,
               date_trunc('hour', s.occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour
        FROM scans s JOIN workspaces w ON w.id = s.workspace_id
        WHERE NOT s.bot AND (only_link IS NULL OR s.link_id = only_link) AND (s.xid IS NULL OR s.xid < below)
          AND s.occurred_at >= COALESCE(w.scans_purged_before, '-infinity')
    ) s
    CROSS JOIN LATERAL (VALUES ('d', s.device), ('o', s.os), ('b', s.browser), ('r', s.referrer),
                               ('c', s.country), ('s', s.source)) AS k(dim, key)
    GROUP BY s.link_id, s.hour, k.dim, k.key, s.workspace_id;

    INSERT INTO scan_rollup_keys_daily (link_id, day, dim, key, workspace_id, scans)
    SELECT r.link_id, (r.hour AT TIME ZONE 'UTC')::date, r.dim, r.key, r.workspace_id, sum(r.scans)
    FROM scan_rollup_keys_hourly r JOIN workspaces w ON w.id = r.workspace_id
    WHERE (only_link IS NULL OR r.link_id = only_link)
      AND r.hour >= COALESCE(w.scans_purged_before, '-infinity')
    GROUP BY 1, 2, 3, 4, 5;

    PERFORM scan_workspace_days_add(only_link, 1);

    -- scan_count counts human scans, as the fold does: the kept rollups
    -- before the horizon and the recomputed ones after it. last_scanned_at
    -- comes from the raw scans after the horizon, or stays when it is older
    -- than the horizon (its raw scan may be gone).
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
-- Rolling back would lose every scan's country and source.
-- +goose StatementBegin
DO $$ BEGIN RAISE EXCEPTION '00028_scan_country_source cannot be rolled back; restore the backup taken before the upgrade'; END $$;
-- +goose StatementEnd
