-- +goose Up
-- Links on custom domains (docs/api.md#custom-domains). A link names its domain by
-- hostname (NULL: the default short base), not by the domains row: codes
-- are unique per hostname, so a code stays taken on that name even after
-- the domain is removed and the name added again, by this workspace or
-- another, like a deleted link's code on the default domain. A domain is
-- removed only while no live link uses it (the domain service checks,
-- holding the domain's row).
DROP INDEX links_domain_idx;
ALTER TABLE links DROP COLUMN domain_id;
ALTER TABLE links ADD COLUMN domain text CHECK (domain = lower(domain) AND length(domain) BETWEEN 1 AND 253);

-- The default domain's codes stay unique on their own (under the old
-- name, which the link service and the retired-code trigger report);
-- a custom domain's codes are unique on that hostname.
DROP INDEX links_code_key;
CREATE UNIQUE INDEX links_code_key ON links (code) WHERE domain IS NULL;
CREATE UNIQUE INDEX links_domain_code_key ON links (domain, code) WHERE domain IS NOT NULL;
-- GET /api/v1/links?domain=…: a workspace's live links on one domain,
-- newest first.
CREATE INDEX links_workspace_domain_idx ON links (workspace_id, domain, id DESC)
    WHERE deleted_at IS NULL AND domain IS NOT NULL;

-- Retired codes (of purged workspaces) are per hostname too; '' is the
-- default domain.
ALTER TABLE retired_codes ADD COLUMN domain text NOT NULL DEFAULT '';
ALTER TABLE retired_codes DROP CONSTRAINT retired_codes_pkey;
ALTER TABLE retired_codes ADD PRIMARY KEY (domain, code);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION links_code_not_retired() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM retired_codes WHERE domain = coalesce(NEW.domain, '') AND code = NEW.code) THEN
        IF NEW.domain IS NULL THEN
            RAISE EXCEPTION 'code % is retired', NEW.code
                USING ERRCODE = 'unique_violation', CONSTRAINT = 'links_code_key';
        END IF;
        RAISE EXCEPTION 'code % is retired on %', NEW.code, NEW.domain
            USING ERRCODE = 'unique_violation', CONSTRAINT = 'links_domain_code_key';
    END IF;
    RETURN NEW;
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION links_code_not_retired() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM retired_codes WHERE code = NEW.code) THEN
        RAISE EXCEPTION 'code % is retired', NEW.code
            USING ERRCODE = 'unique_violation', CONSTRAINT = 'links_code_key';
    END IF;
    RETURN NEW;
END $$;
-- +goose StatementEnd
DELETE FROM retired_codes WHERE domain <> '';
ALTER TABLE retired_codes DROP CONSTRAINT retired_codes_pkey;
ALTER TABLE retired_codes DROP COLUMN domain;
ALTER TABLE retired_codes ADD PRIMARY KEY (code);
DROP INDEX links_workspace_domain_idx;
DROP INDEX links_domain_code_key;
DROP INDEX links_code_key;
DELETE FROM links WHERE domain IS NOT NULL;
CREATE UNIQUE INDEX links_code_key ON links (code);
ALTER TABLE links DROP COLUMN domain;
ALTER TABLE links ADD COLUMN domain_id uuid REFERENCES domains (id);
CREATE INDEX links_domain_idx ON links (domain_id) WHERE domain_id IS NOT NULL;
