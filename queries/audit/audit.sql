-- The workspace audit log (internal/audit). Entries are only ever inserted;
-- a trigger refuses UPDATE, and DELETE outside the purges (db/migrations/00036_audit.sql).

-- name: AuditHeadLock :one
-- Locks the workspace's chain head (creating it on the first entry) until
-- the transaction ends and returns the last entry's seq and hash: appends
-- to one workspace take turns here.
INSERT INTO audit_heads (workspace_id) VALUES ($1)
ON CONFLICT (workspace_id) DO UPDATE SET seq = audit_heads.seq
RETURNING seq, hash;

-- name: AuditHeadSet :exec
UPDATE audit_heads SET seq = $2, hash = $3 WHERE workspace_id = $1;

-- name: AuditHeadGet :one
SELECT seq, hash FROM audit_heads WHERE workspace_id = $1;

-- name: AuditEventInsert :exec
INSERT INTO audit_events (id, workspace_id, seq, action, actor_type, actor_id, actor_user_id, actor_email,
                          target_type, target_id, changes, ip, user_agent, created_at, prev_hash, hash)
VALUES (sqlc.arg(id), sqlc.arg(workspace_id), sqlc.arg(seq), sqlc.arg(action), sqlc.arg(actor_type),
        sqlc.narg(actor_id), sqlc.narg(actor_user_id), sqlc.narg(actor_email), sqlc.arg(target_type),
        sqlc.arg(target_id), sqlc.narg(changes)::jsonb, sqlc.narg(ip), sqlc.narg(user_agent),
        sqlc.arg(created_at), sqlc.arg(prev_hash), sqlc.arg(hash));

-- name: AuditEventListPage :many
-- A workspace's entries newest first, filtered, in pages before the last id
-- of the previous page (audit_events_workspace_idx). action matches exactly,
-- action_prefix by its beginning ("webhook.").
SELECT * FROM audit_events
WHERE workspace_id = sqlc.arg(workspace_id)
  AND (sqlc.narg(before_id)::uuid IS NULL OR id < sqlc.narg(before_id)::uuid)
  AND (sqlc.narg(action)::text IS NULL OR action = sqlc.narg(action)::text)
  AND (sqlc.narg(action_prefix)::text IS NULL OR starts_with(action, sqlc.narg(action_prefix)::text))
  AND (sqlc.narg(actor_id)::text IS NULL OR actor_id = sqlc.narg(actor_id)::text)
  AND (sqlc.narg(target_id)::text IS NULL OR target_id = sqlc.narg(target_id)::text)
  AND (sqlc.narg(since)::timestamptz IS NULL OR created_at >= sqlc.narg(since)::timestamptz)
  AND (sqlc.narg(until)::timestamptz IS NULL OR created_at < sqlc.narg(until)::timestamptz)
ORDER BY id DESC
LIMIT sqlc.arg(lim);

-- name: AuditEventChainPage :many
-- A workspace's entries in chain order after seq after_seq: verification
-- reads the chain forward in pages.
SELECT * FROM audit_events
WHERE workspace_id = sqlc.arg(workspace_id) AND seq > sqlc.arg(after_seq)
ORDER BY seq
LIMIT sqlc.arg(lim);

-- name: AuditPurgeAllow :exec
-- Lets this transaction delete audit entries (the trigger's exception):
-- only the retention purge and the purge of a deleted workspace call it.
SELECT set_config('linkqr.audit_purge', 'on', true);

-- name: AuditEventDeleteOlder :execrows
-- Retention: up to lim entries created before cutoff, of any workspace,
-- oldest first (audit_events_created_idx), so a workspace's chain loses
-- its start and never a middle, even when a run stops between batches.
DELETE FROM audit_events WHERE id IN (
    SELECT a.id FROM audit_events a WHERE a.created_at < sqlc.arg(cutoff) ORDER BY a.created_at LIMIT sqlc.arg(lim));

-- name: AuditEventDeleteWorkspace :execrows
-- The purge of a deleted workspace: up to lim of its entries.
DELETE FROM audit_events WHERE id IN (
    SELECT a.id FROM audit_events a WHERE a.workspace_id = sqlc.arg(workspace_id) LIMIT sqlc.arg(lim));

-- name: AuditActorEmail :one
-- The address of a key's or token's owner, so that the entry names them as
-- a session's entries do. Users are internal/account's, and account
-- imports audit: this one read lives here.
SELECT email FROM users WHERE id = $1;
