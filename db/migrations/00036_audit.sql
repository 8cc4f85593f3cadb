-- +goose Up
-- The workspace audit log (internal/audit, docs/api.md "Audit log"): who
-- changed who may do what, or where the workspace's data goes. Entries are
-- written in the transaction of their change, chained per workspace
-- (hash = SHA-256 of prev_hash and the entry's canonical JSON) and
-- append-only: the trigger below refuses every UPDATE, and every DELETE
-- unless the transaction set linkqr.audit_purge to 'on' (only the retention
-- purge and the purge of a deleted workspace do).

-- The head of each workspace's chain: the last entry's sequence number and
-- hash. Appending locks this row (INSERT … ON CONFLICT DO UPDATE), so two
-- transactions appending to one workspace take turns and never fork the
-- chain. It outlives the retention purge of old entries.
CREATE TABLE audit_heads (
    workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
    seq          bigint NOT NULL DEFAULT 0,
    hash         text NOT NULL DEFAULT ''
);

-- One row per entry. The actor and target are stored as their external ids
-- (usr_…, key_…, whk_…): the entry records what happened even after the
-- user, key or webhook is gone. seq numbers a workspace's chain from 1.
CREATE TABLE audit_events (
    id            uuid PRIMARY KEY,
    workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    seq           bigint NOT NULL,
    action        text NOT NULL,
    actor_type    text NOT NULL,
    actor_id      text,
    actor_user_id text,
    actor_email   text,
    target_type   text NOT NULL,
    target_id     text NOT NULL,
    changes       jsonb,
    ip            text,
    user_agent    text,
    created_at    timestamptz NOT NULL,
    prev_hash     text NOT NULL,
    hash          text NOT NULL,
    UNIQUE (workspace_id, seq)
);

-- The list: a workspace's entries newest first (by id, a UUIDv7).
CREATE INDEX audit_events_workspace_idx ON audit_events (workspace_id, id DESC);
-- Retention deletes the oldest entries of every workspace.
CREATE INDEX audit_events_created_idx ON audit_events (created_at);

-- +goose StatementBegin
CREATE FUNCTION audit_events_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('linkqr.audit_purge', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit events are append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER audit_events_append_only
    BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();

-- TRUNCATE skips row triggers: refuse it outright.
CREATE TRIGGER audit_events_no_truncate
    BEFORE TRUNCATE ON audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only();

-- Who created a webhook subscription (Settings → Webhooks): the creating
-- actor's label (an e-mail address, "API key key_…", "operator"), stored
-- with the subscription so it outlives the audit log's retention. NULL for
-- subscriptions created before this migration.
ALTER TABLE webhook_subscriptions ADD COLUMN created_by text;

-- +goose Down
ALTER TABLE webhook_subscriptions DROP COLUMN created_by;
DROP TABLE audit_events;
DROP TABLE audit_heads;
DROP FUNCTION audit_events_append_only();
