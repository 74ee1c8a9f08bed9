-- SCRAM credentials (type 'scram'): the stored form of the password (RFC 5802 3), never the
-- password. A SCRAM credential names a user name only; its rules and client type are as for basic.

ALTER TABLE credential
    ADD COLUMN algorithm  TEXT,
    ADD COLUMN salt       BYTEA,
    ADD COLUMN stored_key BYTEA,
    ADD COLUMN server_key BYTEA,
    ADD COLUMN iterations INTEGER;

ALTER TABLE credential ADD CONSTRAINT credential_scram CHECK (
    type <> 'scram' OR (username IS NOT NULL AND client_id IS NULL AND password_hash IS NULL
        AND algorithm IN ('SHA-256', 'SHA-512') AND salt IS NOT NULL AND stored_key IS NOT NULL
        AND server_key IS NOT NULL AND iterations >= 1));

-- A user name may have a basic and a SCRAM credential side by side: uniqueness is per type.
DROP INDEX credential_identity;
CREATE UNIQUE INDEX credential_identity ON credential (
    type, coalesce(username, ''), coalesce(client_id, ''), (username IS NULL), (client_id IS NULL));
