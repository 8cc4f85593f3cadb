-- name: SigninFailureInsert :one
INSERT INTO signin_failures (email_key, ip, failed_at)
VALUES ($1, $2, $3)
RETURNING id;

-- name: SigninFailuresByEmail :one
-- failures in the window for one address, and when the oldest of them
-- leaves it (only meaningful when failures > 0).
SELECT count(*)::int AS failures, coalesce(min(failed_at), sqlc.arg(since)::timestamptz)::timestamptz AS oldest
FROM signin_failures
WHERE email_key = sqlc.arg(email_key) AND failed_at > sqlc.arg(since)::timestamptz;

-- name: SigninFailuresByEmailIP :one
SELECT count(*)::int AS failures, coalesce(min(failed_at), sqlc.arg(since)::timestamptz)::timestamptz AS oldest
FROM signin_failures
WHERE email_key = sqlc.arg(email_key) AND ip IS NOT DISTINCT FROM sqlc.narg(ip)::inet AND failed_at > sqlc.arg(since)::timestamptz;

-- name: SigninFailuresByIP :one
SELECT count(*)::int AS failures, coalesce(min(failed_at), sqlc.arg(since)::timestamptz)::timestamptz AS oldest
FROM signin_failures
WHERE ip = sqlc.arg(ip) AND failed_at > sqlc.arg(since)::timestamptz;

-- name: SigninFailureDelete :exec
DELETE FROM signin_failures WHERE id = $1;

-- name: SigninFailureClearEmailIP :exec
-- A successful sign-in forgives the address's earlier failures from the
-- same IP (the owner's own typos) and no others: an attacker elsewhere
-- keeps the failures counted against them.
DELETE FROM signin_failures WHERE email_key = sqlc.arg(email_key) AND ip IS NOT DISTINCT FROM sqlc.narg(ip)::inet;

-- name: SigninFailurePrune :exec
DELETE FROM signin_failures WHERE failed_at <= sqlc.arg(before)::timestamptz;
