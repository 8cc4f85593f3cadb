-- +goose Up
-- Custom domains: a workspace's own short hostnames (docs/api.md#custom-domains),
-- proven by a TXT record at _linkqr.<hostname> holding
-- "linkqr-verification=<token>". The token is not a secret (anyone can read
-- it in DNS once published); it only has to be unguessable and differ per
-- domain, so it is stored as shown.
CREATE TABLE domains (
    id                 uuid PRIMARY KEY,
    workspace_id       uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    -- Lowercase, IDNs as punycode, no trailing dot: parsed at the edge.
    hostname           text NOT NULL CHECK (length(hostname) BETWEEN 1 AND 253 AND hostname = lower(hostname)),
    status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'verified')),
    verification_token text NOT NULL,
    root_url           text CHECK (length(root_url) <= 2048),
    not_found_url      text CHECK (length(not_found_url) <= 2048),
    verified_at        timestamptz,
    -- The last look at the TXT record (by "Verify now" or the re-check
    -- job) and, when it did not show the token, what it found instead.
    last_checked_at    timestamptz,
    last_check_error   text,
    -- Set while a verified domain's record is missing: it keeps working
    -- (an admin decides), but the UI says since when the proof is gone.
    record_missing_since timestamptz,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CHECK ((status = 'verified') = (verified_at IS NOT NULL)),
    CONSTRAINT domains_workspace_hostname_key UNIQUE (workspace_id, hostname)
);
-- One workspace at most holds a hostname verified: another workspace may
-- add it while it is pending elsewhere, but never verify it too.
CREATE UNIQUE INDEX domains_verified_hostname_key ON domains (hostname) WHERE status = 'verified';
CREATE INDEX domains_workspace_idx ON domains (workspace_id, id DESC);
-- The re-check job takes the domains looked at longest ago first.
CREATE INDEX domains_check_idx ON domains (last_checked_at NULLS FIRST, id);

-- The domain a link's code lives on; NULL: the default short base. Nothing
-- sets it yet (links on domains come next); removing a domain is refused
-- while live links use it, and the foreign key refuses it while any link
-- row, deleted ones included, still names it, so no code of a domain is
-- silently lost.
ALTER TABLE links ADD COLUMN domain_id uuid REFERENCES domains (id);
CREATE INDEX links_domain_idx ON links (domain_id) WHERE domain_id IS NOT NULL;

-- +goose Down
ALTER TABLE links DROP COLUMN domain_id;
DROP TABLE domains;
