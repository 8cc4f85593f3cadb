-- +goose Up
-- A CSV import's file is kept in pieces (docs/ui.md, "Import CSV"), so
-- that neither its upload nor its dry run nor its job ever holds it whole
-- in memory: the upload writes a piece as each 256 KiB arrives, the dry run
-- and the job read them back one at a time.
CREATE TABLE link_import_chunks (
    import_id uuid NOT NULL REFERENCES link_imports (id) ON DELETE CASCADE,
    seq       integer NOT NULL,
    data      bytea NOT NULL,
    PRIMARY KEY (import_id, seq)
);

-- The custom codes of the file's rows that can be created with their codes
-- (every cell valid), written as the upload reads them: the dry run finds a
-- code that an earlier row of the same file takes by asking for its first
-- row here, a batch of rows at a time, instead of keeping every code of the
-- file in memory. expires_at is the row's expiry (a row whose expiry has
-- passed by the dry run is no longer valid, so it takes no code).
CREATE TABLE link_import_codes (
    import_id  uuid NOT NULL REFERENCES link_imports (id) ON DELETE CASCADE,
    domain     text NOT NULL, -- '' for the default short domain
    code       text NOT NULL,
    row_number integer NOT NULL,
    expires_at timestamptz,
    PRIMARY KEY (import_id, domain, code, row_number)
);

-- The file's size, which octet_length(content) told before; 'receiving'
-- is an upload whose file is still arriving: nobody sees it, it counts
-- against no quota, and one cut short by a crash expires within the hour.
-- codes_listed: its codes are in link_import_codes (the uploads kept
-- before this migration get theirs listed by their next dry run).
ALTER TABLE link_imports ADD COLUMN bytes bigint NOT NULL DEFAULT 0;
ALTER TABLE link_imports ADD COLUMN codes_listed boolean NOT NULL DEFAULT false;
ALTER TABLE link_imports DROP CONSTRAINT link_imports_state_check;
ALTER TABLE link_imports ADD CONSTRAINT link_imports_state_check
    CHECK (state IN ('receiving', 'uploaded', 'queued', 'done', 'failed'));
UPDATE link_imports SET bytes = octet_length(content);
INSERT INTO link_import_chunks (import_id, seq, data)
SELECT i.id, s.seq, substring(i.content FROM s.seq * 262144 + 1 FOR 262144)
FROM link_imports i, generate_series(0, (octet_length(i.content) - 1) / 262144) AS s(seq)
WHERE octet_length(i.content) > 0;
ALTER TABLE link_imports DROP COLUMN content;

-- +goose Down
ALTER TABLE link_imports ADD COLUMN content bytea NOT NULL DEFAULT '';
UPDATE link_imports i SET content = coalesce(
    (SELECT string_agg(c.data, ''::bytea ORDER BY c.seq) FROM link_import_chunks c WHERE c.import_id = i.id), '');
ALTER TABLE link_imports ALTER COLUMN content DROP DEFAULT;
DELETE FROM link_imports WHERE state = 'receiving';
ALTER TABLE link_imports DROP CONSTRAINT link_imports_state_check;
ALTER TABLE link_imports ADD CONSTRAINT link_imports_state_check
    CHECK (state IN ('uploaded', 'queued', 'done', 'failed'));
ALTER TABLE link_imports DROP COLUMN codes_listed;
ALTER TABLE link_imports DROP COLUMN bytes;
DROP TABLE link_import_codes;
DROP TABLE link_import_chunks;
