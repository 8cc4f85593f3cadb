-- name: UserCreate :one
INSERT INTO users (id, email, password_hash)
VALUES ($1, $2, $3)
RETURNING *;

-- name: UserCreateIfAbsent :one
-- Creates the user unless the address (in any case) already has an
-- account; then no row is returned and nothing changes.
INSERT INTO users (id, email, password_hash)
VALUES ($1, $2, $3)
ON CONFLICT ((lower(email))) DO NOTHING
RETURNING *;

-- name: UserGetByEmail :one
SELECT * FROM users WHERE lower(email) = lower(sqlc.arg(email));

-- name: UserGetByID :one
SELECT * FROM users WHERE id = $1;

-- name: UserSetPassword :exec
UPDATE users SET password_hash = $2 WHERE id = $1;
