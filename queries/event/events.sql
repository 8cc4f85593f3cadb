-- name: EventGetByID :one
SELECT * FROM events WHERE id = $1 AND workspace_id = $2;

-- name: EventCreateMany :many
-- Many events in one statement (a bulk creation's link.created): the
-- arrays are parallel, one element per event. It returns each event's data
-- as stored (jsonb's rendering), which the fan-out puts in the delivery
-- jobs: the same bytes an event read back gives.
INSERT INTO events (id, workspace_id, type, data, created_at)
SELECT unnest(sqlc.arg(ids)::uuid[]), unnest(sqlc.arg(workspace_ids)::uuid[]), unnest(sqlc.arg(types)::text[]),
       unnest(sqlc.arg(data)::text[])::jsonb, sqlc.arg(created_at)
RETURNING id, data;

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

-- name: EventScanPage :many
-- The ids and types of up to lim events before before_id, newest first:
-- the window a type-filtered page picks from, so a rare type in a busy
-- workspace costs a bounded read per page (internal/event/list.go).
SELECT id, type FROM events
WHERE workspace_id = sqlc.arg(workspace_id)
  AND (sqlc.narg(before_id)::uuid IS NULL OR id < sqlc.narg(before_id)::uuid)
ORDER BY id DESC
LIMIT sqlc.arg(lim);

-- name: EventScanAfter :many
-- EventScanPage forward: up to lim settled events after after_id, oldest
-- first.
SELECT id, type FROM events
WHERE workspace_id = sqlc.arg(workspace_id) AND id > sqlc.arg(after_id)::uuid AND created_at <= sqlc.arg(settled_at)
ORDER BY id
LIMIT sqlc.arg(lim);

-- name: EventListByIDs :many
-- The events a type-filtered page picked, in no particular order.
SELECT * FROM events WHERE workspace_id = sqlc.arg(workspace_id) AND id = ANY(sqlc.arg(ids)::uuid[]);
