-- +goose Up
-- Accounts: people, the workspaces they belong to, and their role in each.
CREATE TABLE users (
    id            uuid PRIMARY KEY,
    email         text NOT NULL CHECK (email <> '' AND length(email) <= 254),
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
-- E-mail addresses are unique regardless of case.
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE workspaces (
    id         uuid PRIMARY KEY,
    name       text NOT NULL CHECK (name <> '' AND length(name) <= 100),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role         text NOT NULL CHECK (role IN ('admin', 'member')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX memberships_user_id_idx ON memberships (user_id);

-- +goose Down
DROP TABLE memberships;
DROP TABLE workspaces;
DROP TABLE users;
