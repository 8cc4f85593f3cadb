-- name: EventCreate :exec
INSERT INTO events (id, workspace_id, type, data, created_at)
VALUES ($1, $2, $3, $4, $5);

-- name: EventListByWorkspace :many
SELECT * FROM events WHERE workspace_id = $1 ORDER BY id DESC LIMIT $2;

-- name: EventGetByID :one
SELECT * FROM events WHERE id = $1 AND workspace_id = $2;
