-- Analytics reads rollups only (see db/migrations/00012_scan_rollups.sql),
-- plus raw scans for the partial hours at the edges of a range whose from
-- or to is not on the hour: at most two hours of one link's scans.
--
-- Those raw reads state the start of their window twice: plainly on
-- occurred_at, which prunes partitions, and as a row comparison on
-- (link_id, occurred_at), which only the link's index can serve. Without
-- it, a link with most of a partition's scans looked unselective to the
-- planner, which then read the window of every link through the primary
-- key (occurred_at, id): 190,000 rows for an empty edge, 60-400 ms instead
-- of under 1 ms. (Only the start: a second row comparison for the end made
-- PostgreSQL 15's btree scan run past the window, 5,400 pages for 900 rows.)

-- name: AnalyticsHours :many
SELECT hour, scans, bots, uniq, day_first, day_last,
       scans_15, scans_30, scans_45, uniq_15, uniq_30, uniq_45,
       first_15, first_30, first_45, last_15, last_30, last_45
FROM scan_rollups
WHERE link_id = @link_id AND workspace_id = @workspace_id
  AND hour >= @from_hour AND hour < @to_hour
ORDER BY hour;

-- name: AnalyticsEdgeScans :many
-- The folded scans (below the watermark @folded_below, as the rollups
-- hold) of the partial edge hours [from1, to1) and [from2, to2), per
-- quarter-hour and visitor, with the visitor's quarter-hour bits of that
-- UTC day (0 for bots). The bits are looked up per visitor (a primary-key
-- probe each), never by joining the whole seen-set.
SELECT e.quarter::timestamptz AS quarter, e.bot, e.visitor_hash, e.scans::bigint AS scans,
       COALESCE(v.quarters_am, 0)::bigint AS day_am, COALESCE(v.quarters_pm, 0)::bigint AS day_pm
FROM (
    SELECT date_bin('15 minutes', s.occurred_at, '2000-01-01 00:00:00+00') AS quarter, s.bot, s.visitor_hash, count(*) AS scans
    FROM (
        SELECT e1.occurred_at, e1.bot, e1.visitor_hash FROM scans e1
        WHERE e1.link_id = @link_id AND e1.workspace_id = @workspace_id AND e1.occurred_at >= @from1 AND e1.occurred_at < @to1
          AND (e1.link_id, e1.occurred_at) >= (@link_id, @from1)
          AND (e1.xid IS NULL OR e1.xid < (@folded_below::bigint)::text::xid8)
        UNION ALL
        SELECT e2.occurred_at, e2.bot, e2.visitor_hash FROM scans e2
        WHERE e2.link_id = @link_id AND e2.workspace_id = @workspace_id AND e2.occurred_at >= @from2 AND e2.occurred_at < @to2
          AND (e2.link_id, e2.occurred_at) >= (@link_id, @from2)
          AND (e2.xid IS NULL OR e2.xid < (@folded_below::bigint)::text::xid8)
    ) s
    GROUP BY 1, 2, 3
) e
LEFT JOIN LATERAL (
    SELECT d.quarters_am, d.quarters_pm FROM scan_visitor_days d
    WHERE NOT e.bot AND d.link_id = @link_id AND d.workspace_id = @workspace_id
      AND d.day = (e.quarter AT TIME ZONE 'UTC')::date AND d.visitor_hash = e.visitor_hash
) v ON true;

-- name: AnalyticsVisitorsInQuarters :one
-- Distinct visitors of one link and UTC day seen in any quarter-hour of the
-- masks (am: quarters 0-47, pm: 48-95): needed only for a part of a day
-- that neither starts nor ends it (a range inside one day, a local day
-- boundary cutting a UTC day twice).
SELECT count(*) FROM scan_visitor_days
WHERE link_id = @link_id AND workspace_id = @workspace_id AND day = @day
  AND (quarters_am & @am::bigint <> 0 OR quarters_pm & @pm::bigint <> 0);

-- name: AnalyticsKeys :many
-- The top keys of each breakdown (every country): whole days from the daily rollup, the
-- remaining whole hours from the hourly one, partial hours from raw scans;
-- ranked as the raw-scan queries did (scans descending, then key).
WITH k AS (
    SELECT kd.dim, kd.key, kd.scans FROM scan_rollup_keys_daily kd
    WHERE kd.link_id = @link_id AND kd.workspace_id = @workspace_id AND kd.day >= @from_day AND kd.day < @to_day
    UNION ALL
    SELECT kh.dim, kh.key, kh.scans FROM scan_rollup_keys_hourly kh
    WHERE kh.link_id = @link_id AND kh.workspace_id = @workspace_id
      AND ((kh.hour >= @hour_from1 AND kh.hour < @hour_to1) OR (kh.hour >= @hour_from2 AND kh.hour < @hour_to2))
    UNION ALL
    SELECT d.dim, d.key, s.n FROM (
      -- Counted per combination first: seven rows per combination, not per scan.
      SELECT raw.device, raw.os, raw.browser, raw.referrer_host, raw.country, raw.source, raw.variant, count(*) AS n FROM (
        SELECT e1.device, e1.os, e1.browser, e1.referrer_host, e1.country, e1.source, e1.variant FROM scans e1
        WHERE e1.link_id = @link_id AND e1.workspace_id = @workspace_id AND NOT e1.bot AND e1.occurred_at >= @from1 AND e1.occurred_at < @to1
          AND (e1.link_id, e1.occurred_at) >= (@link_id, @from1)
          AND (e1.xid IS NULL OR e1.xid < (@folded_below::bigint)::text::xid8)
        UNION ALL
        SELECT e2.device, e2.os, e2.browser, e2.referrer_host, e2.country, e2.source, e2.variant FROM scans e2
        WHERE e2.link_id = @link_id AND e2.workspace_id = @workspace_id AND NOT e2.bot AND e2.occurred_at >= @from2 AND e2.occurred_at < @to2
          AND (e2.link_id, e2.occurred_at) >= (@link_id, @from2)
          AND (e2.xid IS NULL OR e2.xid < (@folded_below::bigint)::text::xid8)
      ) raw GROUP BY 1, 2, 3, 4, 5, 6, 7
    ) s
    CROSS JOIN LATERAL (VALUES ('d', s.device), ('o', s.os), ('b', s.browser), ('r', COALESCE(s.referrer_host, '(direct)')),
                               ('c', COALESCE(s.country, '(unknown)')), ('s', s.source),
                               ('v', COALESCE(s.variant, '(default)'))) AS d(dim, key)
)
SELECT r.dim::text AS dim, r.key::text AS key, r.scans::bigint AS scans
FROM (
    SELECT t.dim, t.key, t.scans, row_number() OVER (PARTITION BY t.dim ORDER BY t.scans DESC, t.key) AS rnk
    FROM (SELECT dim, key, sum(scans)::bigint AS scans FROM k GROUP BY dim, key) t
) r
-- Countries and variants are listed whole (a few hundred and 26 at most),
-- so that they add up to the total like the sources do.
WHERE r.rnk <= sqlc.arg(max_keys)::bigint OR r.dim IN ('c', 'v')
ORDER BY r.dim, r.rnk;

-- The workspace overview reads scan_workspace_days only (db/migrations/
-- 00028_scan_country_source.sql): one row per workspace, UTC day, dim and
-- key, so its answer costs rows per day and key, never per scan. Rows the
-- fold took back to zero are skipped. The days are given as a list (every
-- day of the range), so that the primary key (workspace_id, day, dim, key)
-- is entered once per day and dim, reading only the dims asked for: the
-- daily sums and the countries read a few dozen rows per day even when
-- 10,000 links have a row each.

-- name: AnalyticsOverviewDays :many
-- Human scans per UTC day: the sources of a day add up to its scans. Days
-- without scans are left out.
SELECT day, sum(scans)::bigint AS scans
FROM scan_workspace_days
WHERE workspace_id = @workspace_id AND day = ANY(sqlc.arg(days)::date[]) AND dim = 's' AND scans > 0
GROUP BY day
ORDER BY day;

-- name: AnalyticsOverviewKeys :many
-- Every country (c) and source (s) of the days, scans descending, then key.
SELECT dim::text AS dim, key::text AS key, sum(scans)::bigint AS scans
FROM scan_workspace_days
WHERE workspace_id = @workspace_id AND day = ANY(sqlc.arg(days)::date[]) AND dim IN ('c', 's') AND scans > 0
GROUP BY dim, key
ORDER BY dim, 3 DESC, key;

-- name: AnalyticsOverviewTop :many
-- The links (dim l, key: the link's uuid) with the most scans on the days,
-- at most max_links, scans descending, then key: one row per link and day
-- with scans, the overview's largest read (900,000 rows for 10,000 links
-- scanned every day of 90).
SELECT key::text AS key, sum(scans)::bigint AS scans
FROM scan_workspace_days
WHERE workspace_id = @workspace_id AND day = ANY(sqlc.arg(days)::date[]) AND dim = 'l' AND scans > 0
GROUP BY key
ORDER BY 2 DESC, key
LIMIT sqlc.arg(max_links)::bigint;

-- name: AnalyticsOverviewLinks :many
-- The names of the overview's top links, of this workspace only; deleted
-- ones too (the overview says so).
SELECT id, code, title, domain, deleted_at
FROM links
WHERE workspace_id = @workspace_id AND id = ANY(sqlc.arg(ids)::uuid[]);
