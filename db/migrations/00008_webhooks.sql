-- +goose Up
-- Webhook subscriptions: where a workspace wants its events POSTed. The
-- signing secret is stored encrypted (AES-256-GCM, key derived from
-- LINKQR_SECRET_KEY, the row id as associated data); after a rotation the
-- previous secret stays for 24 hours so receivers can switch over.
CREATE TABLE webhook_subscriptions (
    id                         uuid PRIMARY KEY,
    workspace_id               uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    url                        text NOT NULL CHECK (length(url) <= 2048),
    events                     text[] NOT NULL CHECK (cardinality(events) > 0),
    description                text,
    status                     text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
    disabled_reason            text,
    secret_ciphertext          bytea NOT NULL,
    previous_secret_ciphertext bytea,
    previous_secret_expires_at timestamptz,
    -- The first failed attempt since the last success; NULL while healthy.
    -- Five days of failures without a success disable the subscription.
    failing_since              timestamptz,
    created_at                 timestamptz NOT NULL DEFAULT now(),
    updated_at                 timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_subscriptions_workspace_idx ON webhook_subscriptions (workspace_id, id DESC);

-- Webhook deliveries: one row per attempt. "pending" rows are manual
-- retries not yet attempted; the delivery worker completes them.
CREATE TABLE webhook_deliveries (
    id              uuid PRIMARY KEY,
    workspace_id    uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    subscription_id uuid NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    event_id        uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    event_type      text NOT NULL,
    attempt         integer NOT NULL CHECK (attempt >= 1),
    status          text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    response_status integer,
    response_body   text CHECK (octet_length(response_body) <= 1024),
    error           text,
    duration_ms     integer,
    created_at      timestamptz NOT NULL DEFAULT now(),
    next_attempt_at timestamptz
);
CREATE INDEX webhook_deliveries_subscription_idx ON webhook_deliveries (subscription_id, id DESC);
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (subscription_id, event_id, attempt);

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhook_subscriptions;
