-- Analytics reads rollups only (see db/migrations/00012_scan_rollups.sql),
-- plus raw scans at the edges of a range whose from or to is not on the
-- quarter-hour: the rollups keep counts at the quarter marks (migrations
-- 00044, 00047), so the raw reads of human scans cover at most a quarter-hour
-- at each end, and the count of bots (kept per hour only) the partial hours.
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
-- The folded human scans (below the watermark @folded_below, as the rollups
-- hold) of the windows 1 [from1, to1) and 2 [from2, to2), each inside one
-- quarter-hour, per window, side of the window's split instant (after: at
-- or after it) and visitor; with the visitor's quarter-hour bits of that UTC
-- day for the side @probe_after1 (@probe_after2) names, 0 for the other. The
-- bits are looked up per visitor (a primary-key probe each), never by
-- joining the whole seen-set; the side is decided inside the probe's index
-- condition (a NULL day finds nothing at once), since as a condition of its
-- own it was checked after the probe: every visitor of both sides was
-- looked up (3,280 probes instead of 1,089, 18 ms instead of 12).
SELECT e.w::integer AS w, e.after::boolean AS after, e.quarter::timestamptz AS quarter, e.visitor_hash, e.scans::bigint AS scans,
       COALESCE(v.quarters_am, 0)::bigint AS day_am, COALESCE(v.quarters_pm, 0)::bigint AS day_pm
FROM (
    SELECT s.w, s.after, date_bin('15 minutes', s.occurred_at, '2000-01-01 00:00:00+00') AS quarter, s.visitor_hash, count(*) AS scans
    FROM (
        SELECT 1 AS w, e1.occurred_at >= @split1 AS after, e1.occurred_at, e1.visitor_hash FROM scans e1
        WHERE e1.link_id = @link_id AND e1.workspace_id = @workspace_id AND NOT e1.bot AND e1.occurred_at >= @from1 AND e1.occurred_at < @to1
          AND (e1.link_id, e1.occurred_at) >= (@link_id, @from1)
          AND (e1.xid IS NULL OR e1.xid < (@folded_below::bigint)::text::xid8)
        UNION ALL
        SELECT 2 AS w, e2.occurred_at >= @split2 AS after, e2.occurred_at, e2.visitor_hash FROM scans e2
        WHERE e2.link_id = @link_id AND e2.workspace_id = @workspace_id AND NOT e2.bot AND e2.occurred_at >= @from2 AND e2.occurred_at < @to2
          AND (e2.link_id, e2.occurred_at) >= (@link_id, @from2)
          AND (e2.xid IS NULL OR e2.xid < (@folded_below::bigint)::text::xid8)
    ) s
    GROUP BY 1, 2, 3, 4
) e
LEFT JOIN LATERAL (
    SELECT d.quarters_am, d.quarters_pm FROM scan_visitor_days d
    WHERE d.link_id = @link_id AND d.workspace_id = @workspace_id
      AND d.day = CASE WHEN e.after = CASE e.w WHEN 1 THEN @probe_after1::boolean ELSE @probe_after2::boolean END
                       THEN (e.quarter AT TIME ZONE 'UTC')::date END
      AND d.visitor_hash = e.visitor_hash
) v ON true;

-- name: AnalyticsEdgeBots :one
-- The folded bot scans of the windows [from1, to1) and [from2, to2), each
-- counted apart: the rollups count bots per hour only, so a partial hour's
-- are read from raw scans, or its hour's less those of the rest of it.
SELECT count(*) FILTER (WHERE b.w = 1) AS bots1, count(*) FILTER (WHERE b.w = 2) AS bots2 FROM (
    SELECT 1 AS w FROM scans e1
    WHERE e1.link_id = @link_id AND e1.workspace_id = @workspace_id AND e1.bot AND e1.occurred_at >= @from1 AND e1.occurred_at < @to1
      AND (e1.link_id, e1.occurred_at) >= (@link_id, @from1)
      AND (e1.xid IS NULL OR e1.xid < (@folded_below::bigint)::text::xid8)
    UNION ALL
    SELECT 2 AS w FROM scans e2
    WHERE e2.link_id = @link_id AND e2.workspace_id = @workspace_id AND e2.bot AND e2.occurred_at >= @from2 AND e2.occurred_at < @to2
      AND (e2.link_id, e2.occurred_at) >= (@link_id, @from2)
      AND (e2.xid IS NULL OR e2.xid < (@folded_below::bigint)::text::xid8)
) b;

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
-- remaining whole hours from the hourly one, the quarters [piece_lo, piece_hi) of the
-- two partial hours piece_hour1 and piece_hour2 from the hourly one's counts before the
-- quarter marks, the partial quarter-hours from raw scans; ranked as the raw-scan
-- queries did (scans descending, then key). A partial quarter-hour is read as itself
-- (@sign1 or @sign2 1) or, when the rest of its quarter is shorter, as that quarter from
-- the counts (pieces 3 and 4) less the rest, read raw (sign -1).
WITH k AS (
    SELECT kd.dim, kd.key, kd.scans FROM scan_rollup_keys_daily kd
    WHERE kd.link_id = @link_id AND kd.workspace_id = @workspace_id AND kd.day >= @from_day AND kd.day < @to_day
    UNION ALL
    SELECT kh.dim, kh.key, kh.scans FROM scan_rollup_keys_hourly kh
    WHERE kh.link_id = @link_id AND kh.workspace_id = @workspace_id
      AND ((kh.hour >= @hour_from1 AND kh.hour < @hour_to1) OR (kh.hour >= @hour_from2 AND kh.hour < @hour_to2))
    UNION ALL
    SELECT kq.dim, kq.key,
           (CASE p.hi WHEN 1 THEN kq.scans_15 WHEN 2 THEN kq.scans_30 WHEN 3 THEN kq.scans_45 ELSE kq.scans END)
         - (CASE p.lo WHEN 0 THEN 0 WHEN 1 THEN kq.scans_15 WHEN 2 THEN kq.scans_30 ELSE kq.scans_45 END)
    FROM (VALUES (@piece_hour1::timestamptz, @piece_lo1::integer, @piece_hi1::integer),
                 (@piece_hour2::timestamptz, @piece_lo2::integer, @piece_hi2::integer),
                 (@piece_hour3::timestamptz, @piece_lo3::integer, @piece_hi3::integer),
                 (@piece_hour4::timestamptz, @piece_lo4::integer, @piece_hi4::integer)) AS p(hour, lo, hi)
    JOIN scan_rollup_keys_hourly kq ON kq.link_id = @link_id AND kq.workspace_id = @workspace_id AND kq.hour = p.hour
    WHERE p.lo < p.hi
    UNION ALL
    SELECT CASE WHEN GROUPING(raw.device) = 0 THEN 'd' WHEN GROUPING(raw.os) = 0 THEN 'o' WHEN GROUPING(raw.browser) = 0 THEN 'b'
                WHEN GROUPING(raw.referrer) = 0 THEN 'r' WHEN GROUPING(raw.country) = 0 THEN 'c' WHEN GROUPING(raw.source) = 0 THEN 's' ELSE 'v' END,
           COALESCE(raw.device, raw.os, raw.browser, raw.referrer, raw.country, raw.source, raw.variant), sum(raw.sign)
    FROM (
        SELECT e1.device, e1.os, e1.browser, COALESCE(e1.referrer_host, '(direct)') AS referrer, COALESCE(e1.country, '(unknown)') AS country,
               e1.source, COALESCE(e1.variant, '(default)') AS variant, @sign1::integer AS sign FROM scans e1
        WHERE e1.link_id = @link_id AND e1.workspace_id = @workspace_id AND NOT e1.bot AND e1.occurred_at >= @from1 AND e1.occurred_at < @to1
          AND (e1.link_id, e1.occurred_at) >= (@link_id, @from1)
          AND (e1.xid IS NULL OR e1.xid < (@folded_below::bigint)::text::xid8)
        UNION ALL
        SELECT e2.device, e2.os, e2.browser, COALESCE(e2.referrer_host, '(direct)'), COALESCE(e2.country, '(unknown)'),
               e2.source, COALESCE(e2.variant, '(default)'), @sign2::integer FROM scans e2
        WHERE e2.link_id = @link_id AND e2.workspace_id = @workspace_id AND NOT e2.bot AND e2.occurred_at >= @from2 AND e2.occurred_at < @to2
          AND (e2.link_id, e2.occurred_at) >= (@link_id, @from2)
          AND (e2.xid IS NULL OR e2.xid < (@folded_below::bigint)::text::xid8)
    ) raw
    -- One pass, a hash table per breakdown: a few rows per key, not seven per scan.
    GROUP BY GROUPING SETS ((raw.device), (raw.os), (raw.browser), (raw.referrer), (raw.country), (raw.source), (raw.variant))
)
SELECT r.dim::text AS dim, r.key::text AS key, r.scans::bigint AS scans
FROM (
    SELECT t.dim, t.key, t.scans, row_number() OVER (PARTITION BY t.dim ORDER BY t.scans DESC, t.key) AS rnk
    FROM (SELECT dim, key, sum(scans)::bigint AS scans FROM k GROUP BY dim, key HAVING sum(scans) > 0) t
) r
-- Countries and variants are listed whole (a few hundred and 26 at most),
-- so that they add up to the total like the sources do.
WHERE r.rnk <= sqlc.arg(max_keys)::bigint OR r.dim IN ('c', 'v')
ORDER BY r.dim, r.rnk;

-- The workspace overview, in any time zone (db/migrations/
-- 00047_workspace_overview_hours.sql): the series from the workspace's
-- hours (scan_workspace_hours, dim s), countries, sources and top links from
-- its whole UTC days (scan_workspace_days) and, for the partial UTC days at
-- the range's two ends, from hours: the workspace's (countries, sources) or
-- each link's (scan_rollups, top links). A partial day is read as the part
-- inside the range (added) or as the whole day less the part outside
-- (taken away), whichever has fewer hours: each end reads at most 12 hours
-- (New York: 5, Kolkata: 5.5). The parts are given as pieces: an hour, the
-- quarters [lo, hi) of it (0-4, from the counts before the quarter marks:
-- scans_15, scans_30, scans_45, and scans for the whole hour) and a sign;
-- edge numbers them by end. Every answer costs rows per day, hour and key,
-- never per scan. Rows the fold took back to zero are skipped. Days are
-- given as a list, so the primary key (workspace_id, day, dim, key) is
-- entered once per day and dim, reading only the dims asked for.

-- name: AnalyticsOverviewHours :many
-- Human scans per UTC hour of [from_hour, to_hour), with those before the
-- quarter marks: the sources of an hour add up to its scans. Hours without
-- rows are left out.
SELECT hour, sum(scans)::bigint AS scans, sum(scans_15)::bigint AS scans_15,
       sum(scans_30)::bigint AS scans_30, sum(scans_45)::bigint AS scans_45
FROM scan_workspace_hours
WHERE workspace_id = @workspace_id AND dim = 's' AND hour >= @from_hour AND hour < @to_hour
GROUP BY hour
ORDER BY hour;

-- name: AnalyticsOverviewKeys :many
-- Every country (c) and source (s) of the days and the pieces, scans
-- descending, then key.
WITH p AS (
    SELECT unnest(sqlc.arg(piece_hours)::timestamptz[]) AS hour, unnest(sqlc.arg(piece_lo)::integer[]) AS lo,
           unnest(sqlc.arg(piece_hi)::integer[]) AS hi, unnest(sqlc.arg(piece_sign)::integer[]) AS sign
), k AS (
    SELECT d.dim, d.key, d.scans FROM scan_workspace_days d
    WHERE d.workspace_id = @workspace_id AND d.day = ANY(sqlc.arg(days)::date[]) AND d.dim IN ('c', 's') AND d.scans <> 0
    UNION ALL
    SELECT h.dim, h.key,
           p.sign * (CASE p.hi WHEN 1 THEN h.scans_15 WHEN 2 THEN h.scans_30 WHEN 3 THEN h.scans_45 WHEN 4 THEN h.scans ELSE 0 END
                     - CASE p.lo WHEN 1 THEN h.scans_15 WHEN 2 THEN h.scans_30 WHEN 3 THEN h.scans_45 WHEN 4 THEN h.scans ELSE 0 END)
    FROM p JOIN scan_workspace_hours h ON h.workspace_id = @workspace_id AND h.dim IN ('c', 's') AND h.hour = p.hour
)
SELECT k.dim::text AS dim, k.key::text AS key, sum(k.scans)::bigint AS scans
FROM k
GROUP BY k.dim, k.key
HAVING sum(k.scans) > 0
ORDER BY 1, 3 DESC, 2;

-- name: AnalyticsOverviewTop :many
-- The links (key: the link's uuid) with the most scans on the days and
-- pieces, at most max_links, scans descending, then key. The days are one
-- row per link and day with scans, the overview's largest read (900,000
-- rows for 10,000 links scanned every day of 90). A partial day reads, for
-- each link with scans that day (edge_days[i]), its hours in
-- [edge_from[i], edge_to[i]): one probe of scan_rollups' primary key per
-- link and end. The probes are fenced (a materialized CTE, OFFSET 0), so
-- that they run once per end and not once per piece: left to itself the
-- planner joined the pieces first (a probe per link and piece) or hashed
-- every day of every link: 1.5-1.7 s for the ends of 10,000 links instead
-- of 0.4-0.9 s (EXPLAIN ANALYZE on the busy 2-core machine).
WITH p AS (
    SELECT unnest(sqlc.arg(piece_hours)::timestamptz[]) AS hour, unnest(sqlc.arg(piece_lo)::integer[]) AS lo,
           unnest(sqlc.arg(piece_hi)::integer[]) AS hi, unnest(sqlc.arg(piece_sign)::integer[]) AS sign,
           unnest(sqlc.arg(piece_edge)::integer[]) AS edge
), g AS (
    SELECT unnest(sqlc.arg(edge_days)::date[]) AS day, unnest(sqlc.arg(edge_from)::timestamptz[]) AS hfrom,
           unnest(sqlc.arg(edge_to)::timestamptz[]) AS hto, unnest(sqlc.arg(edge_nums)::integer[]) AS edge
), er AS MATERIALIZED (
    SELECT g.edge, r.link_id, r.hour, r.scans, r.scans_15, r.scans_30, r.scans_45
    FROM g CROSS JOIN LATERAL (
        SELECT r.link_id, r.hour, r.scans, r.scans_15, r.scans_30, r.scans_45
        FROM scan_workspace_days e
        JOIN scan_rollups r ON r.link_id = e.key::uuid AND r.hour >= g.hfrom AND r.hour < g.hto
        WHERE e.workspace_id = @workspace_id AND e.day = g.day AND e.dim = 'l' AND e.scans <> 0 AND r.workspace_id = @workspace_id
        OFFSET 0
    ) r
), k AS (
    SELECT d.key, d.scans FROM scan_workspace_days d
    WHERE d.workspace_id = @workspace_id AND d.day = ANY(sqlc.arg(days)::date[]) AND d.dim = 'l' AND d.scans <> 0
    UNION ALL
    SELECT er.link_id::text,
           p.sign * (CASE p.hi WHEN 1 THEN er.scans_15 WHEN 2 THEN er.scans_30 WHEN 3 THEN er.scans_45 WHEN 4 THEN er.scans ELSE 0 END
                     - CASE p.lo WHEN 1 THEN er.scans_15 WHEN 2 THEN er.scans_30 WHEN 3 THEN er.scans_45 WHEN 4 THEN er.scans ELSE 0 END)
    FROM er JOIN p ON p.edge = er.edge AND p.hour = er.hour
)
SELECT k.key::text AS key, sum(k.scans)::bigint AS scans
FROM k
GROUP BY k.key
HAVING sum(k.scans) > 0
ORDER BY 2 DESC, 1
LIMIT sqlc.arg(max_links)::bigint;

-- name: AnalyticsOverviewLinks :many
-- The names of the overview's top links, of this workspace only; deleted
-- ones too (the overview says so).
SELECT id, code, title, domain, deleted_at
FROM links
WHERE workspace_id = @workspace_id AND id = ANY(sqlc.arg(ids)::uuid[]);
