-- +goose Up
-- Targeting, A/B split, password and scan limit (docs/targeting.md):
-- rules and split are kept as the JSON the API speaks (parsed and checked
-- at the edge; the redirect compiles them once per cache fill), the
-- password only as its argon2id hash, max_scans as a plain limit.
-- scans_granted is the scan budget handed out to redirect instances in
-- blocks (internal/redirect/budget.go): an instance serves a 302 only out
-- of a block it was granted, so granted never passes max_scans and the
-- 302s never do either.
ALTER TABLE links
    ADD COLUMN rules         jsonb CHECK (jsonb_typeof(rules) = 'array'),
    ADD COLUMN split         jsonb CHECK (jsonb_typeof(split) = 'array'),
    ADD COLUMN password_hash text,
    ADD COLUMN max_scans     bigint CHECK (max_scans >= 1),
    ADD COLUMN scans_granted bigint NOT NULL DEFAULT 0 CHECK (scans_granted >= 0);

-- Which destination served a scan: NULL (the link's target_url),
-- 'rule:<n>' or 'split:<n>' (0-based, as in the link's lists).
ALTER TABLE scans ADD COLUMN variant text;

-- One more breakdown in the rollups: v variant ("(default)" for the
-- link's own target_url), so variants add up to the total in every range.
ALTER TABLE scan_rollup_keys_hourly DROP CONSTRAINT scan_rollup_keys_hourly_dim_check;
ALTER TABLE scan_rollup_keys_hourly ADD CONSTRAINT scan_rollup_keys_hourly_dim_check
    CHECK (dim IN ('d', 'o', 'b', 'r', 'c', 's', 'v')) NOT VALID;
ALTER TABLE scan_rollup_keys_hourly VALIDATE CONSTRAINT scan_rollup_keys_hourly_dim_check;
ALTER TABLE scan_rollup_keys_daily DROP CONSTRAINT scan_rollup_keys_daily_dim_check;
ALTER TABLE scan_rollup_keys_daily ADD CONSTRAINT scan_rollup_keys_daily_dim_check
    CHECK (dim IN ('d', 'o', 'b', 'r', 'c', 's', 'v')) NOT VALID;
ALTER TABLE scan_rollup_keys_daily VALIDATE CONSTRAINT scan_rollup_keys_daily_dim_check;

-- Every human scan folded so far was served by its link's target_url.
INSERT INTO scan_rollup_keys_hourly (link_id, hour, dim, key, workspace_id, scans)
SELECT r.link_id, r.hour, 'v', '(default)', r.workspace_id, r.scans
FROM scan_rollups r
WHERE r.scans > 0;
INSERT INTO scan_rollup_keys_daily (link_id, day, dim, key, workspace_id, scans)
SELECT r.link_id, (r.hour AT TIME ZONE 'UTC')::date, 'v', '(default)', r.workspace_id, sum(r.scans)
FROM scan_rollups r
WHERE r.scans > 0
GROUP BY 1, 2, 3, 4, 5;

-- rebuild_scan_rollups as in 00028, with the variant breakdown.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION rebuild_scan_rollups(only_link uuid) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    below xid8;
BEGIN
    PERFORM pg_advisory_xact_lock(scan_fold_lock_key());
    UPDATE scan_fold_state SET version = version + 1 RETURNING folded_below INTO below;

    IF only_link IS NULL AND NOT EXISTS (SELECT 1 FROM workspaces WHERE scans_purged_before IS NOT NULL) THEN
        TRUNCATE scan_visitor_days, scan_rollups, scan_rollup_keys_hourly, scan_rollup_keys_daily, scan_workspace_days;
    ELSE
        IF only_link IS NULL THEN
            TRUNCATE scan_workspace_days;
        ELSE
            PERFORM scan_workspace_days_add(only_link, -1);
        END IF;
        DELETE FROM scan_visitor_days r USING workspaces w
        WHERE w.id = r.workspace_id AND (only_link IS NULL OR r.link_id = only_link)
          AND r.day >= (COALESCE(w.scans_purged_before, '-infinity') AT TIME ZONE 'UTC')::date;
        DELETE FROM scan_rollups r USING workspaces w
        WHERE w.id = r.workspace_id AND (only_link IS NULL OR r.link_id = only_link)
          AND r.hour >= COALESCE(w.scans_purged_before, '-infinity');
        DELETE FROM scan_rollup_keys_hourly r USING workspaces w
        WHERE w.id = r.workspace_id AND (only_link IS NULL OR r.link_id = only_link)
          AND r.hour >= COALESCE(w.scans_purged_before, '-infinity');
        DELETE FROM scan_rollup_keys_daily r USING workspaces w
        WHERE w.id = r.workspace_id AND (only_link IS NULL OR r.link_id = only_link)
          AND r.day >= (COALESCE(w.scans_purged_before, '-infinity') AT TIME ZONE 'UTC')::date;
    END IF;

    INSERT INTO scan_visitor_days (link_id, day, visitor_hash, workspace_id, hours)
    SELECT s.link_id, (s.occurred_at AT TIME ZONE 'UTC')::date, s.visitor_hash, s.workspace_id,
           bit_or(1 << extract(hour FROM s.occurred_at AT TIME ZONE 'UTC')::integer)
    FROM scans s JOIN workspaces w ON w.id = s.workspace_id
    WHERE NOT s.bot AND (only_link IS NULL OR s.link_id = only_link) AND (s.xid IS NULL OR s.xid < below)
      AND s.occurred_at >= COALESCE(w.scans_purged_before, '-infinity')
    GROUP BY s.link_id, s.workspace_id, 2, s.visitor_hash;

    INSERT INTO scan_rollups (link_id, hour, workspace_id, scans, bots, uniq, day_first, day_last)
    SELECT link_id, hour, workspace_id, sum(scans), sum(bots), sum(uniq), sum(day_first), sum(day_last)
    FROM (
        SELECT s.link_id, s.workspace_id,
               date_trunc('hour', s.occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
               count(*) FILTER (WHERE NOT s.bot) AS scans,
               count(*) FILTER (WHERE s.bot) AS bots,
               count(DISTINCT s.visitor_hash) FILTER (WHERE NOT s.bot) AS uniq,
               0 AS day_first, 0 AS day_last
        FROM scans s JOIN workspaces w ON w.id = s.workspace_id
        WHERE (only_link IS NULL OR s.link_id = only_link) AND (s.xid IS NULL OR s.xid < below)
          AND s.occurred_at >= COALESCE(w.scans_purged_before, '-infinity')
        GROUP BY 1, 2, 3
        UNION ALL
        -- the lowest set bit is the first hour, the highest the last
        SELECT v.link_id, v.workspace_id,
               (v.day + (24 - position(B'1' IN (v.hours & -v.hours)::bit(24))) * interval '1 hour') AT TIME ZONE 'UTC',
               0, 0, 0, 1, 0
        FROM scan_visitor_days v JOIN workspaces w ON w.id = v.workspace_id
        WHERE (only_link IS NULL OR v.link_id = only_link)
          AND v.day >= (COALESCE(w.scans_purged_before, '-infinity') AT TIME ZONE 'UTC')::date
        UNION ALL
        SELECT v.link_id, v.workspace_id,
               (v.day + (24 - position(B'1' IN v.hours::bit(24))) * interval '1 hour') AT TIME ZONE 'UTC',
               0, 0, 0, 0, 1
        FROM scan_visitor_days v JOIN workspaces w ON w.id = v.workspace_id
        WHERE (only_link IS NULL OR v.link_id = only_link)
          AND v.day >= (COALESCE(w.scans_purged_before, '-infinity') AT TIME ZONE 'UTC')::date
    ) r
    GROUP BY link_id, workspace_id, hour;

    INSERT INTO scan_rollup_keys_hourly (link_id, hour, dim, key, workspace_id, scans)
    SELECT s.link_id, s.hour, k.dim, k.key, s.workspace_id, count(*)
    FROM (
        SELECT s.link_id, s.workspace_id, s.device, s.os, s.browser, COALESCE(s.referrer_host, '(direct)') AS referrer,
               COALESCE(s.country, '(unknown)') AS country, s.source, COALESCE(s.variant, '(default)') AS variant,
               date_trunc('hour', s.occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour
        FROM scans s JOIN workspaces w ON w.id = s.workspace_id
        WHERE NOT s.bot AND (only_link IS NULL OR s.link_id = only_link) AND (s.xid IS NULL OR s.xid < below)
          AND s.occurred_at >= COALESCE(w.scans_purged_before, '-infinity')
    ) s
    CROSS JOIN LATERAL (VALUES ('d', s.device), ('o', s.os), ('b', s.browser), ('r', s.referrer),
                               ('c', s.country), ('s', s.source), ('v', s.variant)) AS k(dim, key)
    GROUP BY s.link_id, s.hour, k.dim, k.key, s.workspace_id;

    INSERT INTO scan_rollup_keys_daily (link_id, day, dim, key, workspace_id, scans)
    SELECT r.link_id, (r.hour AT TIME ZONE 'UTC')::date, r.dim, r.key, r.workspace_id, sum(r.scans)
    FROM scan_rollup_keys_hourly r JOIN workspaces w ON w.id = r.workspace_id
    WHERE (only_link IS NULL OR r.link_id = only_link)
      AND r.hour >= COALESCE(w.scans_purged_before, '-infinity')
    GROUP BY 1, 2, 3, 4, 5;

    PERFORM scan_workspace_days_add(only_link, 1);

    -- scan_count counts human scans, as the fold does: the kept rollups
    -- before the horizon and the recomputed ones after it. last_scanned_at
    -- comes from the raw scans after the horizon, or stays when it is older
    -- than the horizon (its raw scan may be gone).
    UPDATE links l
    SET scan_count = COALESCE(c.scans, 0),
        last_scanned_at = COALESCE(c.last_at, CASE WHEN l.last_scanned_at < w.scans_purged_before THEN l.last_scanned_at END)
    FROM (SELECT l2.id,
                 (SELECT sum(r.scans) FROM scan_rollups r WHERE r.link_id = l2.id) AS scans,
                 (SELECT max(s.occurred_at) FROM scans s
                  WHERE s.link_id = l2.id AND NOT s.bot AND (s.xid IS NULL OR s.xid < below)
                    AND s.occurred_at >= COALESCE(w2.scans_purged_before, '-infinity')) AS last_at
          FROM links l2 JOIN workspaces w2 ON w2.id = l2.workspace_id
          WHERE only_link IS NULL OR l2.id = only_link) c,
         workspaces w
    WHERE l.id = c.id AND w.id = l.workspace_id;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- Rolling back would lose every scan's variant and every link's targeting.
-- +goose StatementBegin
DO $$ BEGIN RAISE EXCEPTION '00030_link_targeting cannot be rolled back; restore the backup taken before the upgrade'; END $$;
-- +goose StatementEnd
