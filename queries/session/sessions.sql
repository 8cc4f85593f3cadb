-- name: SessionGet :one
-- Only the SHA-256 of the cookie's id is stored and looked up.
SELECT * FROM sessions
WHERE id_hash = $1 AND expires_at > sqlc.arg(now)::timestamptz;

-- name: SessionCreate :exec
-- The browser and address are what the account page shows of a session.
INSERT INTO sessions (id_hash, user_id, data, expires_at, user_agent, ip)
VALUES ($1, $2, $3, $4, sqlc.narg(user_agent), sqlc.narg(ip)::inet);

-- name: SessionUpdate :execrows
-- Never re-creates a session that was ended meanwhile (sign-out in another
-- tab, or the id replaced at sign-in): zero rows means it is gone.
UPDATE sessions
SET user_id = $2, data = $3, expires_at = $4, updated_at = now()
WHERE id_hash = $1 AND expires_at > sqlc.arg(now)::timestamptz;

-- name: SessionDelete :exec
DELETE FROM sessions WHERE id_hash = $1;

-- name: SessionDeleteExpired :execrows
DELETE FROM sessions WHERE expires_at <= sqlc.arg(now)::timestamptz;

-- name: SessionTouch :exec
-- Records use at most once a minute, so reading a page rarely writes.
UPDATE sessions SET last_seen_at = sqlc.arg(now)::timestamptz
WHERE id_hash = $1 AND last_seen_at < sqlc.arg(now)::timestamptz - interval '1 minute';

-- name: SessionListByUser :many
SELECT id_hash, ref, user_agent, ip, created_at, last_seen_at
FROM sessions
WHERE user_id = $1 AND expires_at > sqlc.arg(now)::timestamptz
ORDER BY last_seen_at DESC, created_at DESC;

-- name: SessionDeleteByRef :execrows
-- Scoped by user: another user's session ref revokes nothing.
DELETE FROM sessions WHERE user_id = $1 AND ref = $2;

-- name: SessionDeleteByUserExcept :execrows
DELETE FROM sessions WHERE user_id = $1 AND id_hash <> sqlc.arg(keep)::bytea;

-- name: SessionDeleteByUser :execrows
DELETE FROM sessions WHERE user_id = $1;
