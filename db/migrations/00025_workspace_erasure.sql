-- +goose Up
-- Deleting a workspace: the deleting transaction sets deleted_at (every
-- credential revoked, every code answering 410 from then on), and a
-- background job removes the rows in bounded batches, the workspace row
-- last.
ALTER TABLE workspaces ADD COLUMN deleted_at timestamptz;
CREATE INDEX workspaces_deleted_idx ON workspaces (deleted_at) WHERE deleted_at IS NOT NULL;

-- The purge walks a workspace's links, deleted ones included: live ones
-- through the list index, deleted ones through this one. (An index on
-- every link of a workspace would lure the search of the Links page away
-- from its trigram index.)
CREATE INDEX links_workspace_deleted_idx ON links (workspace_id, id) WHERE deleted_at IS NOT NULL;

-- Codes of purged workspaces: they keep answering 410 and are never handed
-- out again, like a deleted link's code, with nothing of the workspace
-- left (no workspace_id on purpose).
CREATE TABLE retired_codes (
    code       text PRIMARY KEY,
    retired_at timestamptz NOT NULL DEFAULT now()
);

-- A retired code is taken, whichever path creates the link: the same
-- unique violation (on links_code_key) as a code in use.
-- +goose StatementBegin
CREATE FUNCTION links_code_not_retired() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM retired_codes WHERE code = NEW.code) THEN
        RAISE EXCEPTION 'code % is retired', NEW.code
            USING ERRCODE = 'unique_violation', CONSTRAINT = 'links_code_key';
    END IF;
    RETURN NEW;
END $$;
-- +goose StatementEnd
CREATE TRIGGER links_code_not_retired BEFORE INSERT ON links
    FOR EACH ROW EXECUTE FUNCTION links_code_not_retired();

-- +goose Down
DROP TRIGGER links_code_not_retired ON links;
DROP FUNCTION links_code_not_retired();
DROP TABLE retired_codes;
DROP INDEX links_workspace_deleted_idx;
DROP INDEX workspaces_deleted_idx;
ALTER TABLE workspaces DROP COLUMN deleted_at;
