-- Retention (internal/retention): each statement deletes at most @lim rows,
-- found through an index on the age column, so one batch holds its row
-- locks briefly and the job repeats it a bounded number of times a run.

-- name: RetentionSessionsExpired :execrows
DELETE FROM sessions WHERE id_hash IN (
    SELECT id_hash FROM sessions WHERE expires_at <= sqlc.arg(now)::timestamptz
    ORDER BY expires_at LIMIT sqlc.arg(lim)::integer);

-- name: RetentionOAuthCodesExpired :execrows
DELETE FROM oauth_codes WHERE code_hash IN (
    SELECT code_hash FROM oauth_codes WHERE expires_at <= sqlc.arg(now)::timestamptz
    ORDER BY expires_at LIMIT sqlc.arg(lim)::integer);

-- name: RetentionOAuthRefreshTokensExpired :execrows
DELETE FROM oauth_refresh_tokens WHERE token_hash IN (
    SELECT token_hash FROM oauth_refresh_tokens WHERE expires_at <= sqlc.arg(now)::timestamptz
    ORDER BY expires_at LIMIT sqlc.arg(lim)::integer);

-- name: RetentionPasswordResetsExpired :execrows
DELETE FROM password_resets WHERE token_hash IN (
    SELECT token_hash FROM password_resets WHERE expires_at <= sqlc.arg(now)::timestamptz
    ORDER BY expires_at LIMIT sqlc.arg(lim)::integer);

-- name: RetentionPasswordResetRequestsBefore :execrows
DELETE FROM password_reset_requests WHERE id IN (
    SELECT id FROM password_reset_requests WHERE requested_at <= sqlc.arg(before)::timestamptz
    ORDER BY requested_at LIMIT sqlc.arg(lim)::integer);

-- name: RetentionSigninFailuresBefore :execrows
DELETE FROM signin_failures WHERE id IN (
    SELECT id FROM signin_failures WHERE failed_at <= sqlc.arg(before)::timestamptz
    ORDER BY failed_at LIMIT sqlc.arg(lim)::integer);

-- name: RetentionSignupAttemptsBefore :execrows
DELETE FROM signup_attempts WHERE id IN (
    SELECT id FROM signup_attempts WHERE attempted_at <= sqlc.arg(before)::timestamptz
    ORDER BY attempted_at LIMIT sqlc.arg(lim)::integer);

-- name: RetentionInvitationsClosedBefore :execrows
-- Accepted, declined and revoked invitations closed before @before, and
-- pending ones that expired before it (invitations_closed_idx).
DELETE FROM invitations WHERE id IN (
    SELECT id FROM invitations WHERE COALESCE(closed_at, expires_at) < sqlc.arg(before)::timestamptz
    ORDER BY COALESCE(closed_at, expires_at) LIMIT sqlc.arg(lim)::integer);

-- name: RetentionWebhookDeliveriesBefore :execrows
-- Attempts made before @before, found through the primary key: delivery
-- ids are UUIDv7, so every one made before @before sorts below @id_below
-- (the first UUIDv7 of that millisecond). Pending deliveries (a manual
-- retry not yet attempted) stay until their job has run.
DELETE FROM webhook_deliveries WHERE id IN (
    SELECT id FROM webhook_deliveries
    WHERE id < sqlc.arg(id_below)::uuid AND created_at < sqlc.arg(before)::timestamptz AND status <> 'pending'
    ORDER BY id LIMIT sqlc.arg(lim)::integer);

-- name: RetentionScanFoldLock :exec
-- The fold lock, for the transaction that moves scan horizons: a rebuild
-- (which holds the same lock) then either finished before, while every raw
-- scan was there, or reads the new horizon and keeps the rollups below it.
SELECT pg_advisory_xact_lock(scan_fold_lock_key());

-- name: RetentionScanHorizonAdvance :exec
-- Moves workspaces' scans_purged_before forward to @before (never back),
-- before any of their scans below it is deleted.
UPDATE workspaces SET scans_purged_before = sqlc.arg(before)::timestamptz
WHERE id = ANY(sqlc.arg(workspace_ids)::uuid[])
  AND (scans_purged_before IS NULL OR scans_purged_before < sqlc.arg(before)::timestamptz);

-- name: RetentionScanWorkspaces :many
-- Every workspace with its scan retention (NULL: the deployment default).
SELECT id, scan_retention_months FROM workspaces ORDER BY id;

-- name: RetentionScansBefore :execrows
-- One workspace's folded scans before @before, through the links' time
-- index. Scans the fold has not passed yet stay: they are not in the
-- rollups, which are all that will be left of them.
DELETE FROM scans WHERE (occurred_at, id) IN (
    SELECT s.occurred_at, s.id FROM links l
    JOIN scans s ON s.link_id = l.id
    WHERE l.workspace_id = sqlc.arg(workspace_id)::uuid AND s.workspace_id = sqlc.arg(workspace_id)::uuid
      AND s.occurred_at < sqlc.arg(before)::timestamptz
      AND (s.xid IS NULL OR s.xid < (SELECT folded_below FROM scan_fold_state))
    LIMIT sqlc.arg(lim)::integer);

-- name: RetentionWorkspaceSetScanMonths :execrows
UPDATE workspaces SET scan_retention_months = sqlc.narg(months)::integer WHERE id = sqlc.arg(id)::uuid;

-- name: RetentionOAuthDynamicClientsUnused :many
-- Self-registered clients (RFC 7591, open to anyone) that no user ever
-- consented to, registered before @before: abandoned registrations must
-- not pile up. Their codes go with them (ON DELETE CASCADE).
DELETE FROM oauth_clients WHERE id IN (
    SELECT c.id FROM oauth_clients c
    WHERE c.dynamic AND c.created_at < sqlc.arg(before)::timestamptz
      AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id)
    ORDER BY c.created_at LIMIT sqlc.arg(lim)::integer)
RETURNING id;

-- name: RetentionLinkImportsExpired :execrows
-- CSV imports (their file and row outcomes, by cascade) past their 24 h,
-- but one whose job is still creating links.
DELETE FROM link_imports WHERE id IN (
    SELECT id FROM link_imports WHERE expires_at <= sqlc.arg(before)::timestamptz AND state <> 'queued'
    ORDER BY expires_at LIMIT sqlc.arg(lim)::integer);

-- name: RetentionWorkspaceScanMonths :one
-- A workspace's raw-scan retention (NULL: the default) before a change, for
-- its audit entry; a deleted workspace is not found.
SELECT scan_retention_months FROM workspaces WHERE id = $1 AND deleted_at IS NULL;
