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
