-- +goose Up
-- Invitations: an admin's offer of a membership, addressed to an e-mail
-- address rather than to a user, so that an address with no account yet can
-- be invited and inviting reveals nothing about who has one. Nobody becomes
-- a member without accepting: the invitee sees the invitation after signing
-- in with that address and accepts or declines it.
CREATE TABLE invitations (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    -- Lower-cased, as users.email is matched case-insensitively.
    email        text NOT NULL CHECK (email <> '' AND length(email) <= 254 AND email = lower(email)),
    role         text NOT NULL CHECK (role IN ('admin', 'member')),
    invited_by   uuid REFERENCES users (id) ON DELETE SET NULL,
    status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'declined', 'revoked')),
    created_at   timestamptz NOT NULL,
    -- A pending invitation past expires_at can no longer be accepted.
    expires_at   timestamptz NOT NULL CHECK (expires_at > created_at),
    -- When the invitation stopped being pending (accepted, declined, revoked).
    closed_at    timestamptz,
    CHECK ((status = 'pending') = (closed_at IS NULL))
);
-- One open invitation per address and workspace; inviting again replaces it.
CREATE UNIQUE INDEX invitations_pending_key ON invitations (workspace_id, email) WHERE status = 'pending';
-- The invitee's list, looked up by their address.
CREATE INDEX invitations_pending_email_idx ON invitations (email) WHERE status = 'pending';

-- +goose Down
DROP TABLE invitations;
