-- +goose Up
-- MCP sign-in for standard clients (docs/api.md, OAuth 2.0): clients may
-- register themselves (RFC 7591 Dynamic Client Registration), and a
-- token names the resource it is for (RFC 8707).

-- dynamic marks a client that registered itself at POST /oauth/register:
-- its name is unverified (the consent page says so), the operator lists
-- and revokes it like any other.
ALTER TABLE oauth_clients ADD COLUMN dynamic boolean NOT NULL DEFAULT false;
ALTER TABLE oauth_clients ADD CONSTRAINT oauth_clients_dynamic_public
    CHECK (NOT dynamic OR (grant_type = 'authorization_code' AND secret_hash IS NULL));

-- Retention deletes self-registered clients nobody consented to (oldest
-- first, internal/retention); a grant's client is looked up by id there
-- and when a client is deleted (ON DELETE CASCADE).
CREATE INDEX oauth_clients_dynamic_idx ON oauth_clients (created_at) WHERE dynamic;
CREATE INDEX oauth_grants_client_idx ON oauth_grants (client_id);

-- resource is the RFC 8707 resource the authorization request named, so
-- the audience of the grant's access tokens: 'mcp' for LINKQR_BASE_URL/mcp;
-- NULL for the API (LINKQR_BASE_URL/api/v1), as before resources existed.
-- The base URL itself is not stored, so changing it keeps grants valid.
ALTER TABLE oauth_codes ADD COLUMN resource text CHECK (resource IN ('mcp'));
ALTER TABLE oauth_grants ADD COLUMN resource text CHECK (resource IN ('mcp'));

-- +goose Down
DROP INDEX oauth_grants_client_idx;
DROP INDEX oauth_clients_dynamic_idx;
ALTER TABLE oauth_grants DROP COLUMN resource;
ALTER TABLE oauth_codes DROP COLUMN resource;
ALTER TABLE oauth_clients DROP CONSTRAINT oauth_clients_dynamic_public;
ALTER TABLE oauth_clients DROP COLUMN dynamic;
