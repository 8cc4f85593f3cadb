-- name: InvitationCreate :one
INSERT INTO invitations (id, workspace_id, email, role, invited_by, created_at, expires_at, by_operator)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
RETURNING *;

-- name: InvitationReplacePending :exec
-- Closes the address's open invitation (expired or not) before a new one is
-- made, so the unique index holds and the invitee sees only the newest.
UPDATE invitations SET status = 'revoked', closed_at = sqlc.arg(now)::timestamptz
WHERE workspace_id = $1 AND email = $2 AND status = 'pending';

-- name: InvitationCountPending :one
SELECT count(*)::int FROM invitations
WHERE workspace_id = $1 AND status = 'pending' AND expires_at > sqlc.arg(now);

-- name: InvitationListPendingByWorkspace :many
-- The admins' list: open invitations of one workspace, newest first.
SELECT i.*, w.name AS workspace_name, inviter.email AS invited_by_email
FROM invitations i
JOIN workspaces w ON w.id = i.workspace_id
LEFT JOIN users inviter ON inviter.id = i.invited_by
WHERE i.workspace_id = $1 AND i.status = 'pending' AND i.expires_at > sqlc.arg(now)
ORDER BY i.created_at DESC, i.id DESC;

-- name: InvitationListPendingForUser :many
-- The invitee's list: open invitations addressed to the user's address.
SELECT i.*, w.name AS workspace_name, inviter.email AS invited_by_email
FROM invitations i
JOIN users me ON i.email = lower(me.email)
JOIN workspaces w ON w.id = i.workspace_id
LEFT JOIN users inviter ON inviter.id = i.invited_by
WHERE me.id = sqlc.arg(user_id) AND i.status = 'pending' AND i.expires_at > sqlc.arg(now)
ORDER BY i.created_at DESC, i.id DESC;

-- name: InvitationCountPendingForUser :one
SELECT count(*)::int
FROM invitations i
JOIN users me ON i.email = lower(me.email)
WHERE me.id = sqlc.arg(user_id) AND i.status = 'pending' AND i.expires_at > sqlc.arg(now);

-- name: InvitationGetPendingForUserForUpdate :one
-- An open invitation, only when it is addressed to the user: another
-- address's invitation is not found, exactly like an unknown id.
SELECT i.*, w.name AS workspace_name
FROM invitations i
JOIN users me ON i.email = lower(me.email)
JOIN workspaces w ON w.id = i.workspace_id
WHERE i.id = sqlc.arg(id) AND me.id = sqlc.arg(user_id)
  AND i.status = 'pending' AND i.expires_at > sqlc.arg(now)
FOR UPDATE OF i;

-- name: InvitationClose :exec
UPDATE invitations SET status = sqlc.arg(status), closed_at = sqlc.arg(now)::timestamptz
WHERE id = sqlc.arg(id) AND status = 'pending';

-- name: InvitationRevoke :one
-- Scoped by workspace, so another workspace's invitation id revokes nothing.
UPDATE invitations SET status = 'revoked', closed_at = sqlc.arg(now)::timestamptz
WHERE id = $1 AND workspace_id = $2 AND status = 'pending' AND expires_at > sqlc.arg(now)
RETURNING *;

-- name: InvitationSetToken :exec
UPDATE invitations SET token_hash = $2 WHERE id = $1;

-- name: InvitationGetByToken :one
-- The invitation a link names, whatever its state: the page says whether it
-- was used, revoked or has expired.
SELECT i.*, w.name AS workspace_name, inviter.email AS invited_by_email
FROM invitations i
JOIN workspaces w ON w.id = i.workspace_id
LEFT JOIN users inviter ON inviter.id = i.invited_by
WHERE i.token_hash = $1;

-- name: InvitationLockByToken :one
SELECT i.*, w.name AS workspace_name
FROM invitations i
JOIN workspaces w ON w.id = i.workspace_id
WHERE i.token_hash = $1
FOR UPDATE OF i;

-- name: InvitationOpenForWorkspaceExists :one
-- Whether the user holds an open invitation to the workspace (the return
-- path after sign-in leads there instead of a 404).
SELECT EXISTS (
    SELECT 1 FROM invitations i
    JOIN users me ON i.email = lower(me.email)
    WHERE me.id = sqlc.arg(user_id) AND i.workspace_id = sqlc.arg(workspace_id)
      AND i.status = 'pending' AND i.expires_at > sqlc.arg(now)
);

-- name: InvitationRevokeAllByInviter :many
-- An admin demoted or removed (or their account deleted): the invitations
-- they made in the workspace can no longer be accepted.
UPDATE invitations SET status = 'revoked', closed_at = sqlc.arg(now)::timestamptz
WHERE workspace_id = $1 AND invited_by = $2 AND status = 'pending'
RETURNING id;

-- name: InvitationInviterIsAdmin :one
-- Accepting: the inviter must still be an admin of the workspace.
SELECT EXISTS (
    SELECT 1 FROM memberships
    WHERE workspace_id = $1 AND user_id = $2 AND role = 'admin'
);
