-- +goose Up
-- CSV imports of the Links page (docs/ui.md): the uploaded file is kept
-- between the dry run and the confirmation, scoped to the workspace and the
-- person who uploaded it, for a day. A River job creates the links chunk by
-- chunk; each chunk's links, its rows' outcomes and the progress commit
-- together, so a restarted job resumes where the last chunk ended.
CREATE TABLE link_imports (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    file_name    text NOT NULL,
    content      bytea NOT NULL,
    keep_codes   boolean NOT NULL,
    row_count    integer NOT NULL,
    state        text NOT NULL DEFAULT 'uploaded' CHECK (state IN ('uploaded', 'queued', 'done', 'failed')),
    processed    integer NOT NULL DEFAULT 0,
    created      integer NOT NULL DEFAULT 0,
    error        text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL DEFAULT now() + interval '1 day',
    finished_at  timestamptz
);
CREATE INDEX link_imports_workspace_idx ON link_imports (workspace_id, user_id);
CREATE INDEX link_imports_expires_idx ON link_imports (expires_at);

-- One row per file row once the import ran: its outcome and the link made.
CREATE TABLE link_import_rows (
    import_id uuid NOT NULL REFERENCES link_imports (id) ON DELETE CASCADE,
    row_number integer NOT NULL,
    outcome   text NOT NULL CHECK (outcome IN ('created', 'invalid', 'code_taken', 'domain_unusable')),
    message   text NOT NULL DEFAULT '',
    link_id   uuid,
    PRIMARY KEY (import_id, row_number)
);

-- +goose Down
DROP TABLE link_import_rows;
DROP TABLE link_imports;
