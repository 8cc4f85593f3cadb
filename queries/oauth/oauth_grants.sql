-- name: OAuthGrantListByUser :many
-- Settings → Authorized apps: the user's live grants, in every workspace
-- they still belong to, with the app's and the workspace's names. Grants of
-- a revoked app are left out: nothing can use them any more.
SELECT g.id, g.client_id, g.workspace_id, g.scopes, g.created_at, g.last_used_at,
       c.name AS client_name, c.dynamic AS client_dynamic, w.name AS workspace_name
FROM oauth_grants g
JOIN oauth_clients c ON c.id = g.client_id
JOIN workspaces w ON w.id = g.workspace_id
JOIN memberships m ON m.workspace_id = g.workspace_id AND m.user_id = g.user_id
WHERE g.user_id = $1 AND g.revoked_at IS NULL AND c.revoked_at IS NULL AND w.deleted_at IS NULL
ORDER BY g.created_at DESC, g.id DESC;

-- name: OAuthGrantRevokeOfUser :one
-- Scoped by user: another user's grant id revokes nothing.
UPDATE oauth_grants SET revoked_at = now()
WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL
RETURNING id, workspace_id, client_id;

-- name: OAuthGrantTouch :exec
-- Records a use of the grant (a refresh), at most once a minute, so a
-- client that refreshes in a loop does not rewrite the row each time.
UPDATE oauth_grants SET last_used_at = now()
WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute');
