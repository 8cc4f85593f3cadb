-- name: AnalyticsTotals :one
SELECT count(*) FILTER (WHERE NOT bot)                              AS total,
       count(DISTINCT visitor_hash) FILTER (WHERE NOT bot)         AS uniq,
       count(*) FILTER (WHERE bot)                                  AS bots
FROM scans
WHERE link_id = @link_id AND workspace_id = @workspace_id
  AND occurred_at >= @from_time AND occurred_at < @to_time;

-- name: AnalyticsSeries :many
-- Buckets are aligned in UTC; date_trunc('week') starts weeks on Monday.
SELECT (date_trunc(@unit::text, occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')::timestamptz AS bucket,
       count(*)                      AS scans,
       count(DISTINCT visitor_hash)  AS uniq
FROM scans
WHERE link_id = @link_id AND workspace_id = @workspace_id
  AND occurred_at >= @from_time AND occurred_at < @to_time AND NOT bot
GROUP BY 1;

-- name: AnalyticsByDevice :many
SELECT device AS key, count(*) AS scans FROM scans
WHERE link_id = @link_id AND workspace_id = @workspace_id
  AND occurred_at >= @from_time AND occurred_at < @to_time AND NOT bot
GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT @max_keys;

-- name: AnalyticsByOS :many
SELECT os AS key, count(*) AS scans FROM scans
WHERE link_id = @link_id AND workspace_id = @workspace_id
  AND occurred_at >= @from_time AND occurred_at < @to_time AND NOT bot
GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT @max_keys;

-- name: AnalyticsByBrowser :many
SELECT browser AS key, count(*) AS scans FROM scans
WHERE link_id = @link_id AND workspace_id = @workspace_id
  AND occurred_at >= @from_time AND occurred_at < @to_time AND NOT bot
GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT @max_keys;

-- name: AnalyticsByReferrer :many
SELECT COALESCE(referrer_host, '(direct)')::text AS key, count(*) AS scans FROM scans
WHERE link_id = @link_id AND workspace_id = @workspace_id
  AND occurred_at >= @from_time AND occurred_at < @to_time AND NOT bot
GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT @max_keys;
