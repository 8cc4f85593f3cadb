-- name: ACMEStatusGet :one
SELECT state, detail, updated_at FROM acme_status WHERE issuer = $1 AND name = $2;

-- name: ACMEStatusObtaining :exec
-- An order begins; a failure before it is forgotten.
INSERT INTO acme_status (issuer, name, state, detail, updated_at) VALUES ($1, $2, 'obtaining', NULL, now())
ON CONFLICT (issuer, name) DO UPDATE SET state = 'obtaining', detail = NULL, updated_at = now();

-- name: ACMEStatusFailed :exec
INSERT INTO acme_status (issuer, name, state, detail, updated_at) VALUES ($1, $2, 'failed', sqlc.arg(detail)::text, now())
ON CONFLICT (issuer, name) DO UPDATE SET state = 'failed', detail = EXCLUDED.detail, updated_at = now();

-- name: ACMEStatusClear :exec
-- The certificate arrived.
DELETE FROM acme_status WHERE issuer = $1 AND name = $2;
