-- name: MembershipCreate :one
INSERT INTO memberships (workspace_id, user_id, role)
VALUES ($1, $2, $3)
RETURNING *;

-- name: MembershipListByWorkspace :many
-- The members page: who belongs to the workspace, oldest member first.
SELECT u.id AS user_id, u.email, m.role, m.created_at
FROM memberships m
JOIN users u ON u.id = m.user_id
WHERE m.workspace_id = $1
ORDER BY m.created_at, lower(u.email);

-- name: MembershipGetForUpdate :one
-- Locks one membership row while its role or existence is being changed.
SELECT * FROM memberships
WHERE workspace_id = $1 AND user_id = $2
FOR UPDATE;

-- name: MembershipCountAdmins :one
SELECT count(*)::int FROM memberships
WHERE workspace_id = $1 AND role = 'admin';

-- name: MembershipSetRole :one
UPDATE memberships SET role = $3
WHERE workspace_id = $1 AND user_id = $2
RETURNING *;

-- name: MembershipDelete :exec
DELETE FROM memberships
WHERE workspace_id = $1 AND user_id = $2;

-- name: MembershipCreateIfAbsent :execrows
-- Accepting an invitation: a user who already belongs keeps their role.
INSERT INTO memberships (workspace_id, user_id, role)
VALUES ($1, $2, $3)
ON CONFLICT (workspace_id, user_id) DO NOTHING;

-- name: MembershipExistsByEmail :one
SELECT EXISTS (
    SELECT 1 FROM memberships m
    JOIN users u ON u.id = m.user_id
    WHERE m.workspace_id = $1 AND lower(u.email) = lower(sqlc.arg(email))
);
