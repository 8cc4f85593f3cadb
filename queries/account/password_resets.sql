-- name: PasswordResetCreate :exec
INSERT INTO password_resets (token_hash, user_id, created_at, expires_at)
VALUES ($1, $2, $3, $4);

-- name: PasswordResetGet :one
-- A reset link, whatever its state: the page says whether it was used or
-- has expired.
SELECT r.*, u.email
FROM password_resets r
JOIN users u ON u.id = r.user_id
WHERE r.token_hash = $1;

-- name: PasswordResetGetForUpdate :one
SELECT * FROM password_resets WHERE token_hash = $1 FOR UPDATE;

-- name: PasswordResetUseAll :exec
-- Setting a new password retires every open link of the user, not just the
-- one used.
UPDATE password_resets SET used_at = sqlc.arg(now)::timestamptz
WHERE user_id = $1 AND used_at IS NULL;

-- name: PasswordResetPrune :exec
DELETE FROM password_resets WHERE expires_at <= sqlc.arg(before)::timestamptz;

-- name: PasswordResetRequestPrune :exec
DELETE FROM password_reset_requests WHERE requested_at <= sqlc.arg(before)::timestamptz;

-- name: PasswordResetRequestInsert :one
INSERT INTO password_reset_requests (email_key, ip, requested_at)
VALUES ($1, $2, $3)
RETURNING id;

-- name: PasswordResetRequestDelete :exec
DELETE FROM password_reset_requests WHERE id = $1;

-- name: PasswordResetRequestCounts :one
-- Requests within the windows: for the address, and from the client IP.
SELECT
    count(*) FILTER (WHERE email_key = sqlc.arg(email_key) AND requested_at > sqlc.arg(email_since)::timestamptz)::int AS by_email,
    coalesce(min(requested_at) FILTER (WHERE email_key = sqlc.arg(email_key) AND requested_at > sqlc.arg(email_since)::timestamptz), now())::timestamptz AS oldest_by_email,
    count(*) FILTER (WHERE ip = sqlc.narg(ip)::inet AND requested_at > sqlc.arg(ip_since)::timestamptz)::int AS by_ip,
    coalesce(min(requested_at) FILTER (WHERE ip = sqlc.narg(ip)::inet AND requested_at > sqlc.arg(ip_since)::timestamptz), now())::timestamptz AS oldest_by_ip
FROM password_reset_requests
WHERE (email_key = sqlc.arg(email_key) OR ip = sqlc.narg(ip)::inet)
  AND requested_at > least(sqlc.arg(email_since)::timestamptz, sqlc.arg(ip_since)::timestamptz);
