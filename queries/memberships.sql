-- name: MembershipCreate :one
INSERT INTO memberships (workspace_id, user_id, role)
VALUES ($1, $2, $3)
RETURNING *;
