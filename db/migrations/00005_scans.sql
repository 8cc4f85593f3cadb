-- +goose Up
-- Scans: one row per redirect, append-only, range-partitioned by month so
-- that a billion rows stay manageable: queries over a date range touch only
-- their months (partition pruning), old months can be detached or dropped
-- whole, and each month's indexes stay small. Partitions are created ahead
-- of time by EnsureScanPartitions (at start and daily); the default partition
-- only catches rows if that ever fails, so no scan is rejected.
CREATE TABLE scans (
    id            uuid NOT NULL,
    workspace_id  uuid NOT NULL,
    link_id       uuid NOT NULL,
    occurred_at   timestamptz NOT NULL,
    referrer_host text,
    device        text NOT NULL,
    os            text NOT NULL,
    browser       text NOT NULL,
    bot           boolean NOT NULL,
    visitor_hash  bytea NOT NULL,
    PRIMARY KEY (occurred_at, id)
) PARTITION BY RANGE (occurred_at);

-- Listing a link's scans newest first (ids are time-ordered UUIDv7).
CREATE INDEX scans_link_id_idx ON scans (link_id, id DESC);
-- Analytics of a link over a time range.
CREATE INDEX scans_link_time_idx ON scans (link_id, occurred_at) INCLUDE (bot, visitor_hash);

CREATE TABLE scans_default PARTITION OF scans DEFAULT;

-- ensure_scan_partitions creates the monthly partitions from the month of
-- `start` for `months` months; existing ones are left alone.
-- +goose StatementBegin
CREATE FUNCTION ensure_scan_partitions(start timestamptz, months integer) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    m timestamptz := date_trunc('month', start AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    name text;
BEGIN
    FOR i IN 0..months - 1 LOOP
        name := 'scans_' || to_char(m AT TIME ZONE 'UTC', 'YYYY_MM');
        IF to_regclass(name) IS NULL THEN
            EXECUTE format('CREATE TABLE %I PARTITION OF scans FOR VALUES FROM (%L) TO (%L)',
                           name, m, m + interval '1 month');
        END IF;
        m := m + interval '1 month';
    END LOOP;
END
$$;
-- +goose StatementEnd

SELECT ensure_scan_partitions(now() - interval '1 month', 4);

-- +goose Down
DROP TABLE scans;
DROP FUNCTION ensure_scan_partitions(timestamptz, integer);
