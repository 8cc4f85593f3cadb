-- The one read internal/membership makes: memberships are written by
-- internal/account (queries/account/memberships.sql), whose changes call
-- membership.Changed; account imports membership, so the read lives here.

-- name: MembershipGetRole :one
-- The role a credential's owner has now (internal/membership caches it).
SELECT role FROM memberships WHERE workspace_id = $1 AND user_id = $2;
