-- name: IdempotencyKeyGet :one
-- Keys older than 24 hours are treated as unused even before the purge.
SELECT * FROM idempotency_keys
WHERE workspace_id = $1 AND key = $2 AND created_at > now() - interval '24 hours';

-- name: IdempotencyKeyDeleteExpired :execrows
DELETE FROM idempotency_keys WHERE created_at <= now() - interval '24 hours';

-- name: IdempotencyKeyDeleteOne :exec
DELETE FROM idempotency_keys WHERE workspace_id = $1 AND key = $2;

-- name: IdempotencyKeyStore :exec
INSERT INTO idempotency_keys (workspace_id, key, method, path, body_sha256, response_status, response_headers, response_body)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8);
