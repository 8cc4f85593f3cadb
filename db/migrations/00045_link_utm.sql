-- +goose Up
-- UTM parameters (docs/api.md#utm-parameters): a link's five campaign
-- parameters, each absent (NULL) or a value internal/link parsed (trimmed,
-- 1-200 characters, no control characters). The redirect merges them into
-- the target's query; target_url itself stays as the user typed it.
ALTER TABLE links
    ADD COLUMN utm_source   text CHECK (utm_source <> ''),
    ADD COLUMN utm_medium   text CHECK (utm_medium <> ''),
    ADD COLUMN utm_campaign text CHECK (utm_campaign <> ''),
    ADD COLUMN utm_term     text CHECK (utm_term <> ''),
    ADD COLUMN utm_content  text CHECK (utm_content <> '');

-- The row trigger of 00043 compares every column a reader sees
-- (TestLinkRowTriggerCoversEveryColumn); its WHEN clause now names the
-- five parameters too, so a change of one reaches the cached API reads.
DROP TRIGGER links_row_changed ON links;
CREATE TRIGGER links_row_changed
AFTER UPDATE ON links
FOR EACH ROW
WHEN ((OLD.workspace_id, OLD.code, OLD.target_url, OLD.title, OLD.status, OLD.expires_at,
       OLD.created_at, OLD.updated_at, OLD.deleted_at, OLD.previous_target_url,
       OLD.target_changed_at, OLD.domain, OLD.tags, OLD.rules, OLD.split, OLD.password_hash,
       OLD.max_scans, OLD.utm_source, OLD.utm_medium, OLD.utm_campaign, OLD.utm_term,
       OLD.utm_content)
      IS DISTINCT FROM
      (NEW.workspace_id, NEW.code, NEW.target_url, NEW.title, NEW.status, NEW.expires_at,
       NEW.created_at, NEW.updated_at, NEW.deleted_at, NEW.previous_target_url,
       NEW.target_changed_at, NEW.domain, NEW.tags, NEW.rules, NEW.split, NEW.password_hash,
       NEW.max_scans, NEW.utm_source, NEW.utm_medium, NEW.utm_campaign, NEW.utm_term,
       NEW.utm_content))
EXECUTE FUNCTION notify_link_row_changed();

-- A workspace's UTM templates (docs/ui.md#utm-templates): named sets of
-- the five values that fill the link forms. At most 50 per workspace
-- (internal/utmtemplate counts under the workspace's lock); names are
-- unique per workspace regardless of case.
CREATE TABLE utm_templates (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         text NOT NULL CHECK (name <> ''),
    utm_source   text CHECK (utm_source <> ''),
    utm_medium   text CHECK (utm_medium <> ''),
    utm_campaign text CHECK (utm_campaign <> ''),
    utm_term     text CHECK (utm_term <> ''),
    utm_content  text CHECK (utm_content <> ''),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX utm_templates_name_key ON utm_templates (workspace_id, lower(name));

-- +goose Down
DROP TABLE utm_templates;
DROP TRIGGER links_row_changed ON links;
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
ALTER TABLE links
    DROP COLUMN utm_content,
    DROP COLUMN utm_term,
    DROP COLUMN utm_campaign,
    DROP COLUMN utm_medium,
    DROP COLUMN utm_source;
