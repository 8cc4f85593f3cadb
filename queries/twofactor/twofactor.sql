-- name: TOTPGet :one
SELECT * FROM totp_factors WHERE user_id = $1;

-- name: TOTPUpsertPending :exec
-- A new secret replaces an unconfirmed one; a confirmed one stays until
-- it is removed.
INSERT INTO totp_factors (user_id, secret_ciphertext)
VALUES ($1, $2)
ON CONFLICT (user_id) DO UPDATE SET secret_ciphertext = EXCLUDED.secret_ciphertext, last_step = 0
WHERE totp_factors.confirmed_at IS NULL;

-- name: TOTPConfirm :execrows
UPDATE totp_factors SET confirmed_at = $2, last_step = $3
WHERE user_id = $1 AND confirmed_at IS NULL;

-- name: TOTPUseStep :execrows
-- Accepts a code's time step once: only a step after the last accepted one.
UPDATE totp_factors SET last_step = $2
WHERE user_id = $1 AND confirmed_at IS NOT NULL AND last_step < $2;

-- name: TOTPDelete :execrows
DELETE FROM totp_factors WHERE user_id = $1;

-- name: RecoveryCodesDelete :exec
DELETE FROM recovery_codes WHERE user_id = $1;

-- name: RecoveryCodeInsert :exec
INSERT INTO recovery_codes (user_id, code_hash) VALUES ($1, $2);

-- name: RecoveryCodeUse :execrows
UPDATE recovery_codes SET used_at = $3
WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL;

-- name: RecoveryCodesRemaining :one
SELECT count(*) FROM recovery_codes WHERE user_id = $1 AND used_at IS NULL;

-- name: PasskeyInsert :exec
INSERT INTO passkeys (id, user_id, credential_id, name, credential)
VALUES ($1, $2, $3, $4, $5);

-- name: PasskeyListByUser :many
SELECT * FROM passkeys WHERE user_id = $1 ORDER BY created_at, id;

-- name: PasskeyGetByCredentialID :one
SELECT * FROM passkeys WHERE credential_id = $1;

-- name: PasskeyUpdateCredential :exec
UPDATE passkeys SET credential = $3, last_used_at = $4 WHERE user_id = $1 AND credential_id = $2;

-- name: PasskeyDelete :one
DELETE FROM passkeys WHERE user_id = $1 AND id = $2 RETURNING *;

-- name: PasskeysDeleteByUser :execrows
DELETE FROM passkeys WHERE user_id = $1;

-- name: PolicyGet :one
SELECT required FROM workspace_two_factor WHERE workspace_id = $1;

-- name: PolicySet :exec
INSERT INTO workspace_two_factor (workspace_id, required) VALUES ($1, $2)
ON CONFLICT (workspace_id) DO UPDATE SET required = EXCLUDED.required, updated_at = now();

-- name: PolicyRequiredForUser :many
-- The workspaces of the user that require a second factor.
SELECT p.workspace_id FROM workspace_two_factor p
JOIN memberships m ON m.workspace_id = p.workspace_id
WHERE m.user_id = $1 AND p.required;

-- name: UserWorkspaces :many
SELECT workspace_id FROM memberships WHERE user_id = $1 ORDER BY workspace_id;
