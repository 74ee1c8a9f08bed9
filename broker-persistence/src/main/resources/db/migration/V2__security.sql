-- Security data that operators change through the admin API and every node reads: MQTT client
-- credentials, blocked clients, the log of refused connections, and the admin users with their tokens.
-- Ids are UUIDs made by the database (gen_random_uuid() is built in since PostgreSQL 13).

CREATE TABLE credential (
    id            UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    type          TEXT NOT NULL,
    username      TEXT,
    client_id     TEXT,
    password_hash TEXT,
    client_type   TEXT,
    publish       TEXT[] NOT NULL DEFAULT '{}',
    subscribe     TEXT[] NOT NULL DEFAULT '{}',
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT credential_names_a_client CHECK (username IS NOT NULL OR client_id IS NOT NULL),
    CONSTRAINT credential_client_type CHECK (client_type IS NULL OR client_type IN ('DEVICE', 'APPLICATION'))
);

-- One credential per (user name, client ID) where an absent value counts as a value of its own:
-- the IS NULL columns keep an absent user name apart from an empty one without a sentinel string
-- (NULLS NOT DISTINCT would need PostgreSQL 15, external servers may be older).
CREATE UNIQUE INDEX credential_identity ON credential (
    coalesce(username, ''), coalesce(client_id, ''), (username IS NULL), (client_id IS NULL));

-- The lookups of a CONNECT: by user name (with or without client ID), and by client ID alone.
CREATE INDEX credential_by_username ON credential (username, client_id) WHERE username IS NOT NULL;
CREATE INDEX credential_by_client_id ON credential (client_id) WHERE username IS NULL;

CREATE TABLE blocked_client (
    id          UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    type        TEXT NOT NULL,
    value       TEXT NOT NULL,
    target      TEXT,
    expires_at  TIMESTAMPTZ,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT blocked_client_type CHECK (type IN ('client_id', 'username', 'ip', 'regex')),
    CONSTRAINT blocked_client_target CHECK (target IS NULL OR target IN ('client_id', 'username', 'ip'))
);

CREATE UNIQUE INDEX blocked_client_identity ON blocked_client (type, value, coalesce(target, ''));
CREATE INDEX blocked_client_newest ON blocked_client (created_at DESC);

-- One row per client ID: its latest refusal and how many there were since first_at.
CREATE TABLE refused_connection (
    client_id      TEXT PRIMARY KEY,
    username       TEXT,
    address        TEXT,
    password_given BOOLEAN NOT NULL,
    tls            BOOLEAN NOT NULL,
    reason         TEXT NOT NULL,
    first_at       TIMESTAMPTZ NOT NULL,
    last_at        TIMESTAMPTZ NOT NULL,
    count          BIGINT NOT NULL
);

-- Listing (latest first) and purging (oldest first) both go by last_at.
CREATE INDEX refused_connection_last ON refused_connection (last_at);

CREATE TABLE admin_user (
    id            UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    username      TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Only the SHA-256 of a token is kept: reading this table does not let anyone in.
CREATE TABLE admin_token (
    token_hash  BYTEA PRIMARY KEY,
    user_id     UUID NOT NULL REFERENCES admin_user (id) ON DELETE CASCADE,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at  TIMESTAMPTZ NOT NULL
);

CREATE INDEX admin_token_expires ON admin_token (expires_at);
CREATE INDEX admin_token_user ON admin_token (user_id);
