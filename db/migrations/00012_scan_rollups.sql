-- +goose Up
-- Analytics rollups (docs/architecture.md "Analytics at scale"): raw scans stay the
-- record (the scans list, rebuilding), answers come from these tables. The
-- scan writer maintains them in the transaction of each batch's COPY;
-- rebuild_scan_rollups recomputes them from raw scans, and this migration
-- uses it to backfill today's scans.

-- One row per link and UTC hour with any scan.
CREATE TABLE scan_rollups (
    link_id      uuid        NOT NULL,
    hour         timestamptz NOT NULL, -- start of the UTC hour
    workspace_id uuid        NOT NULL,
    scans        bigint      NOT NULL, -- human scans
    bots         bigint      NOT NULL,
    uniq         bigint      NOT NULL, -- distinct human visitors in this hour
    day_first    bigint      NOT NULL, -- visitors whose first human scan of their UTC day is in this hour
    day_last     bigint      NOT NULL, -- visitors whose last human scan of their UTC day is in this hour
    PRIMARY KEY (link_id, hour)
) WITH (fillfactor = 80);

-- Breakdowns of human scans (dim: d device, o os, b browser, r referrer
-- host, "(direct)" without one), per hour and, for long ranges, per day.
CREATE TABLE scan_rollup_keys_hourly (
    link_id      uuid        NOT NULL,
    hour         timestamptz NOT NULL,
    dim          text        NOT NULL CHECK (dim IN ('d', 'o', 'b', 'r')),
    key          text        NOT NULL,
    workspace_id uuid        NOT NULL,
    scans        bigint      NOT NULL,
    PRIMARY KEY (link_id, hour, dim, key)
) WITH (fillfactor = 80);

CREATE TABLE scan_rollup_keys_daily (
    link_id      uuid   NOT NULL,
    day          date   NOT NULL, -- UTC day
    dim          text   NOT NULL CHECK (dim IN ('d', 'o', 'b', 'r')),
    key          text   NOT NULL,
    workspace_id uuid   NOT NULL,
    scans        bigint NOT NULL,
    PRIMARY KEY (link_id, day, dim, key)
) WITH (fillfactor = 80);

-- The exact unique-visitor seen-set: one row per link, UTC day and human
-- visitor, with bit h of hours set when the visitor scanned in hour h.
-- Visitor hashes are keyed per UTC day, so a visitor is counted once per
-- day, as the API documents.
CREATE TABLE scan_visitor_days (
    link_id      uuid    NOT NULL,
    day          date    NOT NULL,
    visitor_hash bytea   NOT NULL,
    workspace_id uuid    NOT NULL,
    hours        integer NOT NULL CHECK (hours > 0 AND hours < 16777216),
    PRIMARY KEY (link_id, day, visitor_hash)
);

-- scan_rollup_lock_key is the advisory lock that serialises the scan
-- writer and rebuild_scan_rollups on one link (scan.rollupLockKey computes
-- the same value in Go): the two halves of the uuid XORed.
-- +goose StatementBegin
CREATE FUNCTION scan_rollup_lock_key(link uuid) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT ('x' || substr(replace(link::text, '-', ''), 1, 16))::bit(64)::bigint
         # ('x' || substr(replace(link::text, '-', ''), 17, 16))::bit(64)::bigint
$$;
-- +goose StatementEnd

-- rebuild_scan_rollups recomputes every rollup of one link (NULL: of all
-- links) from raw scans. One link: under the link's advisory lock, so the
-- scan writer waits for it and adds its batch afterwards. All links: under
-- table locks that block the writer (not readers) for the duration.
-- +goose StatementBegin
CREATE FUNCTION rebuild_scan_rollups(only_link uuid) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF only_link IS NULL THEN
        LOCK TABLE scan_visitor_days, scan_rollups, scan_rollup_keys_hourly, scan_rollup_keys_daily IN EXCLUSIVE MODE;
        TRUNCATE scan_visitor_days, scan_rollups, scan_rollup_keys_hourly, scan_rollup_keys_daily;
    ELSE
        PERFORM pg_advisory_xact_lock(scan_rollup_lock_key(only_link));
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
END
$$;
-- +goose StatementEnd

SELECT rebuild_scan_rollups(NULL);

-- +goose Down
DROP FUNCTION rebuild_scan_rollups(uuid);
DROP FUNCTION scan_rollup_lock_key(uuid);
DROP TABLE scan_visitor_days;
DROP TABLE scan_rollup_keys_daily;
DROP TABLE scan_rollup_keys_hourly;
DROP TABLE scan_rollups;
