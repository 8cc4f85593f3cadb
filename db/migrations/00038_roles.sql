-- +goose Up
-- Roles bind every credential (docs/api.md#roles-and-permissions): a key or
-- a client-credentials client acts as the user who made it, at that user's
-- role now; one made by an operator command acts as an admin. created_by
-- alone cannot say which: it becomes NULL when its user is deleted, and a
-- credential whose owner is gone must act as nobody, never as an admin.
ALTER TABLE api_keys ADD COLUMN operator boolean NOT NULL DEFAULT false;
ALTER TABLE oauth_clients ADD COLUMN operator boolean NOT NULL DEFAULT false;
UPDATE api_keys SET operator = true WHERE created_by IS NULL AND revoked_at IS NULL;
UPDATE oauth_clients SET operator = true
WHERE created_by IS NULL AND revoked_at IS NULL AND grant_type = 'client_credentials' AND NOT dynamic;

-- An invitation can be accepted only while its inviter is still an admin of
-- the workspace; one sent with an operator's credential has no inviter.
ALTER TABLE invitations ADD COLUMN by_operator boolean NOT NULL DEFAULT false;
-- Revoking the invitations an admin made, when they are demoted or removed.
CREATE INDEX invitations_pending_inviter_idx ON invitations (workspace_id, invited_by) WHERE status = 'pending';

-- +goose Down
DROP INDEX invitations_pending_inviter_idx;
ALTER TABLE invitations DROP COLUMN by_operator;
ALTER TABLE oauth_clients DROP COLUMN operator;
ALTER TABLE api_keys DROP COLUMN operator;
