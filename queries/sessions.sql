-- name: SessionGet :one
-- Only the SHA-256 of the cookie's id is stored and looked up.
SELECT * FROM sessions
WHERE id_hash = $1 AND expires_at > sqlc.arg(now)::timestamptz;

-- name: SessionCreate :exec
INSERT INTO sessions (id_hash, user_id, data, expires_at)
VALUES ($1, $2, $3, $4);

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
