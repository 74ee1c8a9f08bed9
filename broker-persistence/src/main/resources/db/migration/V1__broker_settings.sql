-- Runtime settings that operators change through the admin API without a restart.
-- One row per setting; the value is JSON so a setting can be a number, a string or a structure.
CREATE TABLE broker_setting (
    name        TEXT PRIMARY KEY,
    value       JSONB NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
