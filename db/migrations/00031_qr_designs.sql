-- +goose Up
-- QR designs (docs/api.md#qr-designs): one per link that has its own, and at
-- most one per workspace (link_id NULL) used by every link without one.
-- Columns hold values the qrdesign package parsed; the logo is the
-- server's own re-encoded PNG, never the bytes a client uploaded.
CREATE TABLE qr_designs (
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    link_id      uuid REFERENCES links (id) ON DELETE CASCADE,
    fg           text NOT NULL CHECK (fg ~ '^[0-9A-F]{6}$'),
    bg           text NOT NULL CHECK (bg ~ '^[0-9A-F]{6}$'),
    ecc          text NOT NULL CHECK (ecc IN ('L', 'M', 'Q', 'H')),
    margin       integer NOT NULL CHECK (margin BETWEEN 0 AND 16),
    modules      text NOT NULL CHECK (modules IN ('square', 'dots', 'rounded')),
    logo_png     bytea CHECK (length(logo_png) <= 1048576),
    logo_width   integer,
    logo_height  integer,
    frame_text   text CHECK (length(frame_text) BETWEEN 1 AND 32),
    frame_color  text CHECK (frame_color ~ '^[0-9A-F]{6}$'),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CHECK ((logo_png IS NULL) = (logo_width IS NULL) AND (logo_png IS NULL) = (logo_height IS NULL)),
    CHECK ((frame_text IS NULL) = (frame_color IS NULL)),
    CHECK (logo_png IS NULL OR ecc = 'H')
);
CREATE UNIQUE INDEX qr_designs_link_key ON qr_designs (link_id) WHERE link_id IS NOT NULL;
CREATE UNIQUE INDEX qr_designs_workspace_default_key ON qr_designs (workspace_id) WHERE link_id IS NULL;
-- The workspace's designs (erasure, the ZIP's batch look-up).
CREATE INDEX qr_designs_workspace_idx ON qr_designs (workspace_id);

-- +goose Down
DROP TABLE qr_designs;
