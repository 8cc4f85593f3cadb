-- +goose Up
-- What happened to the last certificate order for a name of acme_cache, so
-- a domain's page can say that a certificate is being obtained or why the
-- CA refused one (acme/autocert keeps that in one process's memory only).
-- A row exists only between an order's start and the certificate's
-- arrival, or after a failure until the next order succeeds.
CREATE TABLE acme_status (
    -- The ACME directory URL, as in acme_cache.
    issuer     text NOT NULL,
    -- The hostname (the certificate's name in acme_cache).
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 300),
    -- obtaining: an order began at updated_at; failed: it ended without a
    -- certificate at updated_at, for the reason in detail.
    state      text NOT NULL CHECK (state IN ('obtaining', 'failed')),
    -- The CA's reason (or why the CA could not be asked), for people.
    detail     text CHECK (length(detail) <= 1000),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (issuer, name),
    CHECK ((state = 'failed') = (detail IS NOT NULL))
);

-- +goose Down
DROP TABLE acme_status;
