-- name: UserCreate :one
INSERT INTO users (id, email, password_hash)
VALUES ($1, $2, $3)
RETURNING *;

-- name: UserGetByEmail :one
SELECT * FROM users WHERE lower(email) = lower(sqlc.arg(email));

-- name: UserGetByID :one
SELECT * FROM users WHERE id = $1;
