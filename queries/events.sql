-- name: EventListByWorkspace :many
SELECT * FROM events WHERE workspace_id = $1 ORDER BY id DESC LIMIT $2;

-- name: EventGetByID :one
SELECT * FROM events WHERE id = $1 AND workspace_id = $2;

-- name: EventCreateMany :exec
-- Many events in one statement (a bulk creation's link.created): the
-- arrays are parallel, one element per event.
INSERT INTO events (id, workspace_id, type, data, created_at)
SELECT unnest(sqlc.arg(ids)::uuid[]), unnest(sqlc.arg(workspace_ids)::uuid[]), unnest(sqlc.arg(types)::text[]),
       unnest(sqlc.arg(data)::text[])::jsonb, sqlc.arg(created_at);

-- name: EventListPage :many
-- A workspace's events of the given types, newest first, in pages before
-- the last id of the previous page (events_workspace_idx).
SELECT * FROM events
WHERE workspace_id = sqlc.arg(workspace_id) AND type = ANY(sqlc.arg(types)::text[])
  AND (sqlc.narg(before_id)::uuid IS NULL OR id < sqlc.narg(before_id)::uuid)
ORDER BY id DESC
LIMIT sqlc.arg(lim);

-- name: EventListAfter :many
-- A workspace's events of the given types after an event id, oldest first,
-- recorded at or before settled_at: reading forward skips no event whose
-- transaction committed within the settle window (internal/event/list.go).
SELECT * FROM events
WHERE workspace_id = sqlc.arg(workspace_id) AND type = ANY(sqlc.arg(types)::text[])
  AND id > sqlc.arg(after_id)::uuid AND created_at <= sqlc.arg(settled_at)
ORDER BY id
LIMIT sqlc.arg(lim);
