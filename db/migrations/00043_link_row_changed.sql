-- +goose Up
-- API reads of a link come from each instance's memory (internal/link
-- reads.go); every change of a link's row that a reader sees is announced
-- here, whichever package makes it (the link service, bulk edits, a
-- workspace's erasure), so no write path can forget to. The counters the
-- scan fold and the scan budgets move (scan_count, last_scanned_at,
-- scans_granted) are left out: they change thousands of times a second
-- under load, and the fold announces its counts once per fold
-- (linkqr_link_counts). TestLinkRowTriggerCoversEveryColumn fails when a
-- column is added to links without being named here or there.
-- +goose StatementBegin
CREATE FUNCTION notify_link_row_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('linkqr_link_row', OLD.id::text);
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER links_row_changed
AFTER UPDATE ON links
FOR EACH ROW
WHEN ((OLD.workspace_id, OLD.code, OLD.target_url, OLD.title, OLD.status, OLD.expires_at,
       OLD.created_at, OLD.updated_at, OLD.deleted_at, OLD.previous_target_url,
       OLD.target_changed_at, OLD.domain, OLD.tags, OLD.rules, OLD.split, OLD.password_hash,
       OLD.max_scans)
      IS DISTINCT FROM
      (NEW.workspace_id, NEW.code, NEW.target_url, NEW.title, NEW.status, NEW.expires_at,
       NEW.created_at, NEW.updated_at, NEW.deleted_at, NEW.previous_target_url,
       NEW.target_changed_at, NEW.domain, NEW.tags, NEW.rules, NEW.split, NEW.password_hash,
       NEW.max_scans))
EXECUTE FUNCTION notify_link_row_changed();

CREATE TRIGGER links_row_deleted
AFTER DELETE ON links
FOR EACH ROW
EXECUTE FUNCTION notify_link_row_changed();

-- +goose Down
DROP TRIGGER links_row_deleted ON links;
DROP TRIGGER links_row_changed ON links;
DROP FUNCTION notify_link_row_changed();
