-- Credentials of type x509: a client is let in by the subject common name (CN) of a certificate in
-- the chain it presented in the TLS handshake, given exactly or as a regular expression. Such a
-- credential names no user name, client ID or password.

ALTER TABLE credential ADD COLUMN cert_common_name TEXT;
ALTER TABLE credential ADD COLUMN cert_common_name_regex BOOLEAN NOT NULL DEFAULT false;

ALTER TABLE credential DROP CONSTRAINT credential_names_a_client;
ALTER TABLE credential ADD CONSTRAINT credential_names_a_client CHECK (
    type = 'x509' OR username IS NOT NULL OR client_id IS NOT NULL);
ALTER TABLE credential ADD CONSTRAINT credential_x509 CHECK (
    type <> 'x509' OR (cert_common_name IS NOT NULL AND cert_common_name <> '' AND password_hash IS NULL
        AND username IS NULL AND client_id IS NULL));
ALTER TABLE credential ADD CONSTRAINT credential_cert_only_x509 CHECK (
    type = 'x509' OR (cert_common_name IS NULL AND NOT cert_common_name_regex));

-- The (user name, client ID) identity is that of the other types; x509 credentials, which have
-- neither, are told apart by their common name (one credential per name, exact or pattern).
DROP INDEX credential_identity;
CREATE UNIQUE INDEX credential_identity ON credential (
    coalesce(username, ''), coalesce(client_id, ''), (username IS NULL), (client_id IS NULL))
    WHERE type <> 'x509';
CREATE UNIQUE INDEX credential_x509_common_name ON credential (cert_common_name) WHERE type = 'x509';

-- The lookup of a CONNECT with a certificate: the exact names of its chain by the index above,
-- and the few patterns, all of which are tried.
CREATE INDEX credential_x509_patterns ON credential (id) WHERE type = 'x509' AND cert_common_name_regex;
