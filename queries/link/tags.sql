-- name: TagList :many
-- GET /api/v1/tags: a workspace's tags by name, with how many live links
-- carry each, after the cursor's name; an index-only scan of link_tags.
SELECT tag, count(*) AS link_count FROM link_tags
WHERE workspace_id = sqlc.arg(workspace_id)
  AND (sqlc.narg(after)::text IS NULL OR tag > sqlc.narg(after)::text)
GROUP BY tag
ORDER BY tag
LIMIT sqlc.arg(lim);
