-- +goose Up
-- Tags on links (docs/api.md#tags). links.tags is what a link shows (sorted,
-- lowercase, at most 10; the link service normalises them). link_tags is
-- the index behind the filters and counts: one row per live link and tag,
-- kept by the triggers below whatever writes links (create, bulk, PATCH,
-- delete), so filtering a workspace of millions of links by a tag is one
-- ordered index scan of (workspace_id, tag, link_id) and a count per tag
-- is an index-only scan.
ALTER TABLE links ADD COLUMN tags text[] NOT NULL DEFAULT '{}';
-- NOT VALID: every existing row has no tags, so no table scan is needed.
ALTER TABLE links ADD CONSTRAINT links_tags_check CHECK (cardinality(tags) <= 10) NOT VALID;

CREATE TABLE link_tags (
    workspace_id uuid NOT NULL,
    tag          text NOT NULL,
    link_id      uuid NOT NULL REFERENCES links (id) ON DELETE CASCADE,
    PRIMARY KEY (workspace_id, tag, link_id)
);
CREATE INDEX link_tags_link_idx ON link_tags (link_id);

-- +goose StatementBegin
CREATE FUNCTION link_tags_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        DELETE FROM link_tags WHERE link_id = OLD.id;
    END IF;
    IF NEW.deleted_at IS NULL AND cardinality(NEW.tags) > 0 THEN
        INSERT INTO link_tags (workspace_id, tag, link_id)
        SELECT NEW.workspace_id, t, NEW.id FROM unnest(NEW.tags) AS t
        ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER links_tags_insert AFTER INSERT ON links
    FOR EACH ROW WHEN (cardinality(NEW.tags) > 0) EXECUTE FUNCTION link_tags_sync();
CREATE TRIGGER links_tags_update AFTER UPDATE OF tags, deleted_at ON links
    FOR EACH ROW WHEN (OLD.tags IS DISTINCT FROM NEW.tags OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL))
    EXECUTE FUNCTION link_tags_sync();

-- +goose Down
DROP TRIGGER links_tags_update ON links;
DROP TRIGGER links_tags_insert ON links;
DROP FUNCTION link_tags_sync();
DROP TABLE link_tags;
ALTER TABLE links DROP CONSTRAINT links_tags_check;
ALTER TABLE links DROP COLUMN tags;
