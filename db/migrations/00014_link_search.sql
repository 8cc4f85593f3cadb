-- +goose Up
-- The Links page: search by title, code or target, and "changed from …" on
-- the link page.
--
-- Search is a case-insensitive substring match (ILIKE '%term%') over one
-- expression of the three fields, served by a pg_trgm GIN index (pg_trgm
-- ships with PostgreSQL's contrib, in Debian's postgresql-15 package, and is
-- a trusted extension: the database owner may create it). A term of three
-- or more characters is answered from the index whatever the workspace's
-- size; shorter terms are filtered from the workspace's links list index.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX links_search_idx ON links
    USING gin ((coalesce(title, '') || ' ' || code || ' ' || target_url) gin_trgm_ops)
    WHERE deleted_at IS NULL;

-- The target a link pointed to before its last re-pointing, and when that
-- happened (NULL until it is first re-pointed).
ALTER TABLE links
    ADD COLUMN previous_target_url text CHECK (length(previous_target_url) <= 2048),
    ADD COLUMN target_changed_at timestamptz;

-- +goose Down
ALTER TABLE links DROP COLUMN previous_target_url, DROP COLUMN target_changed_at;
DROP INDEX links_search_idx;
