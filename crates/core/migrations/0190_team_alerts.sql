-- Team "left running" alerts (team::alerts), cached from the team's server so the checks work
-- offline, like `team_budgets`.

-- Who the team names to be told, and after how many idle minutes (one row; none: the defaults).
CREATE TABLE team_alert_settings (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    -- A JSON list of member names.
    recipients    TEXT    NOT NULL,
    after_minutes INTEGER NOT NULL CHECK (after_minutes BETWEEN 5 AND 1440),
    set_by        TEXT    NOT NULL
);

-- The idle stretches other members' apps measured on their instances, as last pulled.
CREATE TABLE team_idle (
    instance_uid TEXT    PRIMARY KEY,
    idle_since   TEXT,
    idle_minutes INTEGER NOT NULL CHECK (idle_minutes >= 0),
    measured_at  TEXT    NOT NULL,
    reported_by  TEXT    NOT NULL
);

-- A team reminder closed in the in-app popup stays closed.
ALTER TABLE team_reminders ADD COLUMN dismissed_at TEXT;
