-- Deleting workspaces and accounts: the marking transaction, then the
-- background purge, in bounded batches that each use an index.

-- name: ErasureWorkspaceMarkDeleted :one
-- Locks the workspace (against concurrent membership changes) and marks it.
UPDATE workspaces SET deleted_at = now()
WHERE id = $1 AND deleted_at IS NULL
RETURNING id, name;

-- name: ErasureMembershipsDelete :many
-- Sessions lose the workspace at once: access always goes through a membership.
DELETE FROM memberships WHERE workspace_id = $1 RETURNING user_id;

-- name: ErasureInvitationsDelete :exec
DELETE FROM invitations WHERE workspace_id = $1;

-- name: ErasureWebhooksDisable :exec
-- Nothing of a deleted workspace is delivered any more (queued
-- deliveries see the subscription disabled and stop).
UPDATE webhook_subscriptions SET status = 'disabled', disabled_reason = 'the workspace was deleted', updated_at = now()
WHERE workspace_id = $1 AND status = 'enabled';

-- name: ErasureWorkspacesPending :many
-- Workspaces marked deleted before sqlc.arg(before) whose rows are still
-- being removed.
SELECT id FROM workspaces WHERE deleted_at < sqlc.arg(before) ORDER BY deleted_at, id LIMIT 100;

-- name: ErasureLinkBatch :many
-- The next links to purge, live and deleted ones (each through its index).
(SELECT l.id FROM links l WHERE l.workspace_id = $1 AND l.deleted_at IS NULL ORDER BY l.id DESC LIMIT $2)
UNION ALL
(SELECT d.id FROM links d WHERE d.workspace_id = $1 AND d.deleted_at IS NOT NULL ORDER BY d.id DESC LIMIT $2);

-- name: ErasureScansDelete :execrows
DELETE FROM scans WHERE (occurred_at, id) IN (
    SELECT occurred_at, id FROM scans WHERE link_id = ANY(sqlc.arg(links)::uuid[]) LIMIT sqlc.arg(lim));

-- name: ErasureRollupsDelete :execrows
DELETE FROM scan_rollups WHERE (link_id, hour) IN (
    SELECT link_id, hour FROM scan_rollups WHERE link_id = ANY(sqlc.arg(links)::uuid[]) LIMIT sqlc.arg(lim));

-- name: ErasureRollupKeysHourlyDelete :execrows
DELETE FROM scan_rollup_keys_hourly WHERE (link_id, hour, dim, key) IN (
    SELECT link_id, hour, dim, key FROM scan_rollup_keys_hourly WHERE link_id = ANY(sqlc.arg(links)::uuid[]) LIMIT sqlc.arg(lim));

-- name: ErasureRollupKeysDailyDelete :execrows
DELETE FROM scan_rollup_keys_daily WHERE (link_id, day, dim, key) IN (
    SELECT link_id, day, dim, key FROM scan_rollup_keys_daily WHERE link_id = ANY(sqlc.arg(links)::uuid[]) LIMIT sqlc.arg(lim));

-- name: ErasureVisitorDaysDelete :execrows
DELETE FROM scan_visitor_days WHERE (link_id, day, visitor_hash) IN (
    SELECT link_id, day, visitor_hash FROM scan_visitor_days WHERE link_id = ANY(sqlc.arg(links)::uuid[]) LIMIT sqlc.arg(lim));

-- name: ErasureWorkspaceDaysDelete :execrows
DELETE FROM scan_workspace_days WHERE (workspace_id, day, dim, key) IN (
    SELECT d.workspace_id, d.day, d.dim, d.key FROM scan_workspace_days d WHERE d.workspace_id = sqlc.arg(ws)::uuid LIMIT sqlc.arg(lim));

-- name: ErasureWorkspaceHoursDelete :execrows
DELETE FROM scan_workspace_hours WHERE (workspace_id, dim, hour, key) IN (
    SELECT h.workspace_id, h.dim, h.hour, h.key FROM scan_workspace_hours h WHERE h.workspace_id = sqlc.arg(ws)::uuid LIMIT sqlc.arg(lim));

-- name: ErasureLinksRetire :execrows
-- The links' codes stay taken (and answer 410) after their rows are gone.
WITH gone AS (
    DELETE FROM links WHERE id = ANY(sqlc.arg(links)::uuid[]) AND workspace_id = sqlc.arg(workspace_id) RETURNING domain, code
)
INSERT INTO retired_codes (domain, code) SELECT coalesce(domain, ''), code FROM gone ON CONFLICT DO NOTHING;

-- name: ErasureEventsDelete :execrows
-- Deliveries go with their events (ON DELETE CASCADE), a few per event.
DELETE FROM events WHERE id IN (
    SELECT e.id FROM events e WHERE e.workspace_id = sqlc.arg(workspace_id) LIMIT sqlc.arg(lim));

-- name: ErasureWorkspaceDelete :execrows
-- Last: what is left (keys, webhooks, clients, idempotency keys) is small
-- and goes by ON DELETE CASCADE.
DELETE FROM workspaces WHERE id = $1 AND deleted_at IS NOT NULL;

-- name: ErasureSoleAdminWorkspaces :many
-- Account deletion: the workspaces where the user is the only admin, with
-- how many members they have in all.
SELECT w.id, w.name,
       (SELECT count(*) FROM memberships o WHERE o.workspace_id = w.id)::int AS members
FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
WHERE m.user_id = $1 AND m.role = 'admin'
  AND NOT EXISTS (SELECT 1 FROM memberships a
                  WHERE a.workspace_id = w.id AND a.role = 'admin' AND a.user_id <> m.user_id)
ORDER BY w.name;

-- name: ErasureUserDelete :execrows
-- Sessions, memberships, reset tokens and grants go by ON DELETE CASCADE;
-- keys and clients the user created stay with their workspace (created_by
-- becomes NULL) unless revoked first.
DELETE FROM users WHERE id = $1;

-- The reads and the revocation below are internal/account's
-- (WorkspaceListForUser, WorkspaceLock, InvitationRevokeAllByInviter),
-- restated for deleting an account: erasure is a declared owner across
-- tables (docs/architecture.md#layering).

-- name: ErasureUserWorkspaces :many
-- The workspaces a user belongs to, in the order membership changes list them.
SELECT w.id
FROM workspaces w
JOIN memberships m ON m.workspace_id = w.id
WHERE m.user_id = $1
ORDER BY w.name, w.id;

-- name: ErasureWorkspaceLock :one
-- Membership changes lock the workspace: two admins leaving at once cannot
-- both count the other as the remaining admin.
SELECT id FROM workspaces WHERE id = $1 FOR UPDATE;

-- name: ErasureInvitationsRevokeByInviter :exec
-- A deleted account's pending invitations can no longer be accepted.
UPDATE invitations SET status = 'revoked', closed_at = sqlc.arg(now)::timestamptz
WHERE workspace_id = $1 AND invited_by = $2 AND status = 'pending';
