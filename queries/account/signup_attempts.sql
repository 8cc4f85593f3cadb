-- name: SignupAttemptInsert :one
INSERT INTO signup_attempts (ip, attempted_at)
VALUES ($1, $2)
RETURNING id;

-- name: SignupAttemptsByIP :one
-- attempts in the window from one IP, and when the oldest of them leaves
-- it (only meaningful when attempts > 0).
SELECT count(*)::int AS attempts, coalesce(min(attempted_at), sqlc.arg(since)::timestamptz)::timestamptz AS oldest
FROM signup_attempts
WHERE ip = sqlc.arg(ip) AND attempted_at > sqlc.arg(since)::timestamptz;

-- name: SignupAttemptDelete :exec
DELETE FROM signup_attempts WHERE id = $1;

-- name: SignupAttemptPrune :exec
DELETE FROM signup_attempts WHERE attempted_at <= sqlc.arg(before)::timestamptz;
