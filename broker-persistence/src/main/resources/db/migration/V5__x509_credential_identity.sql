-- V4 made the (user name, client ID) identity per type and, in re-creating its index, dropped the
-- exclusion of x509 credentials that V3 gave it. x509 credentials have neither user name nor client
-- ID and are told apart by their common name (credential_x509_common_name), so they stay outside.
DROP INDEX credential_identity;
CREATE UNIQUE INDEX credential_identity ON credential (
    type, coalesce(username, ''), coalesce(client_id, ''), (username IS NULL), (client_id IS NULL))
    WHERE type <> 'x509';
