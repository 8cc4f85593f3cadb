-- +goose Up
-- Retention (internal/retention, docs/operations.md "Retention"): periodic jobs delete
-- what linkqr no longer needs, in bounded batches. This migration adds the
-- per-workspace scan retention, the horizon below which a workspace's raw
-- scans may be gone, and the indexes the batched deletes need.

-- scan_retention_months: how long the workspace's raw scans are kept; NULL
-- means the deployment's default (LINKQR_SCAN_RETENTION_MONTHS, 13).
-- scans_purged_before: raw scans of the workspace before this UTC midnight
-- may have been purged. The rollups before it are the only record left, so
-- rebuild_scan_rollups keeps them and recomputes only from it on. It only
-- moves forward, and only under the fold lock.
ALTER TABLE workspaces
    ADD COLUMN scan_retention_months integer CHECK (scan_retention_months BETWEEN 1 AND 1200),
    ADD COLUMN scans_purged_before   timestamptz;

-- Deleting an event cascades to its deliveries: PostgreSQL looks them up by
-- event_id, which led no index (a sequential scan of webhook_deliveries per
-- deleted event). The attempts of one event to one subscription are
-- served as well with event_id first, so the index changes order rather
-- than a second one being added (no extra entry per delivery).
CREATE INDEX webhook_deliveries_event_first_idx ON webhook_deliveries (event_id, subscription_id, attempt);
DROP INDEX webhook_deliveries_event_idx;
ALTER INDEX webhook_deliveries_event_first_idx RENAME TO webhook_deliveries_event_idx;

-- Expired refresh tokens are deleted oldest first.
CREATE INDEX oauth_refresh_tokens_expires_idx ON oauth_refresh_tokens (expires_at);

-- When an invitation stopped being open: closed_at for accepted, declined
-- and revoked ones, expires_at for pending ones (in the future while they
-- are open, so they never pass the purge's cutoff).
CREATE INDEX invitations_closed_idx ON invitations ((COALESCE(closed_at, expires_at)));

-- rebuild_scan_rollups recomputes the rollups of one link (NULL: of all
-- links), its scan_count and last_scanned_at from the raw scans the folds
-- have passed (and those with no xid), from its workspace's
-- scans_purged_before on: the rollups before it stay as they are, because
-- their raw scans are gone (retention) and they are the record. It takes
-- the fold lock first, so the horizon it reads cannot move meanwhile (the
-- retention job moves it under the same lock), and no fold runs.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION rebuild_scan_rollups(only_link uuid) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    below xid8;
BEGIN
    PERFORM pg_advisory_xact_lock(scan_fold_lock_key());
    UPDATE scan_fold_state SET version = version + 1 RETURNING folded_below INTO below;

    IF only_link IS NULL AND NOT EXISTS (SELECT 1 FROM workspaces WHERE scans_purged_before IS NOT NULL) THEN
        TRUNCATE scan_visitor_days, scan_rollups, scan_rollup_keys_hourly, scan_rollup_keys_daily;
    ELSE
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
               date_trunc('hour', s.occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour
        FROM scans s JOIN workspaces w ON w.id = s.workspace_id
        WHERE NOT s.bot AND (only_link IS NULL OR s.link_id = only_link) AND (s.xid IS NULL OR s.xid < below)
          AND s.occurred_at >= COALESCE(w.scans_purged_before, '-infinity')
    ) s
    CROSS JOIN LATERAL (VALUES ('d', s.device), ('o', s.os), ('b', s.browser), ('r', s.referrer)) AS k(dim, key)
    GROUP BY s.link_id, s.hour, k.dim, k.key, s.workspace_id;

    INSERT INTO scan_rollup_keys_daily (link_id, day, dim, key, workspace_id, scans)
    SELECT r.link_id, (r.hour AT TIME ZONE 'UTC')::date, r.dim, r.key, r.workspace_id, sum(r.scans)
    FROM scan_rollup_keys_hourly r JOIN workspaces w ON w.id = r.workspace_id
    WHERE (only_link IS NULL OR r.link_id = only_link)
      AND r.hour >= COALESCE(w.scans_purged_before, '-infinity')
    GROUP BY 1, 2, 3, 4, 5;

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
-- The rebuild of 00020 recomputes from raw scans alone: run after a purge
-- it would lose the purged range's analytics.
-- +goose StatementBegin
DO $$ BEGIN RAISE EXCEPTION '00024_retention cannot be rolled back; restore the backup taken before the upgrade'; END $$;
-- +goose StatementEnd
