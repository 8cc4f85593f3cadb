-- name: ACMECacheGet :one
SELECT value_enc FROM acme_cache WHERE issuer = $1 AND name = $2;

-- name: ACMECachePut :exec
-- A later value wins: a renewed certificate replaces the one it renews.
INSERT INTO acme_cache (issuer, name, value_enc) VALUES ($1, $2, $3)
ON CONFLICT (issuer, name) DO UPDATE SET value_enc = EXCLUDED.value_enc, updated_at = now();

-- name: ACMECacheDelete :exec
DELETE FROM acme_cache WHERE issuer = $1 AND name = $2;
