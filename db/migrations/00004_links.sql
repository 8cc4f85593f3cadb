-- +goose Up
-- Links: a short code and the target it currently redirects to. Deleted links
-- keep their row (deleted_at set) so their code is never handed out again.
CREATE TABLE links (
    id              uuid PRIMARY KEY,
    workspace_id    uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    code            text NOT NULL CHECK (code ~ '^[A-Za-z0-9_-]{3,64}$'),
    target_url      text NOT NULL CHECK (length(target_url) <= 2048),
    title           text CHECK (char_length(title) <= 200),
    status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
    expires_at      timestamptz,
    scan_count      bigint NOT NULL DEFAULT 0,
    last_scanned_at timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    deleted_at      timestamptz
);
-- Unique across the instance and across deleted links: codes are never reused.
CREATE UNIQUE INDEX links_code_key ON links (code);
CREATE INDEX links_workspace_list_idx ON links (workspace_id, id DESC) WHERE deleted_at IS NULL;

-- Events: every change, written in the transaction of the change. Webhook
-- delivery reads from here.
CREATE TABLE events (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    type         text NOT NULL,
    data         jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_workspace_idx ON events (workspace_id, id DESC);

-- Idempotency keys: the stored response of a POST, committed in the same
-- transaction as the change it made; purged 24 hours after first use.
CREATE TABLE idempotency_keys (
    workspace_id     uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    key              text NOT NULL,
    method           text NOT NULL,
    path             text NOT NULL,
    body_sha256      bytea NOT NULL,
    response_status  integer NOT NULL,
    response_headers jsonb NOT NULL,
    response_body    bytea NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE events;
DROP TABLE links;
