-- "Left running" alerts: who in the team is told about any member's instance that bills while its
-- GPUs sit idle, and after how many idle minutes. One row per team; no row: the defaults (each
-- instance's own member only, after 30 minutes).
CREATE TABLE team_alert_settings (
    team_id       BIGINT  PRIMARY KEY REFERENCES teams (id),
    recipients    TEXT[]  NOT NULL DEFAULT '{}',
    after_minutes INTEGER NOT NULL CHECK (after_minutes BETWEEN 5 AND 1440),
    set_by        TEXT    NOT NULL,
    set_at        TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Only the laptop whose monitor watches an instance knows how long its GPUs have been idle; it
-- reports the current idle stretch here on every sync (idle_since NULL: busy when measured), so
-- every member's app can raise the alert. The newest measurement of an instance wins.
CREATE TABLE idle_reports (
    team_id      BIGINT  NOT NULL REFERENCES teams (id),
    instance_uid UUID    NOT NULL,
    idle_since   TIMESTAMPTZ,
    idle_minutes INTEGER NOT NULL CHECK (idle_minutes >= 0),
    measured_at  TIMESTAMPTZ NOT NULL,
    reported_by  TEXT    NOT NULL,
    PRIMARY KEY (team_id, instance_uid)
);

-- "Optionally the last Verify result": a member who opts in shares a summary of the last Verify of
-- each of their instances (when, how many errors and warnings, which findings). The newest wins.
CREATE TABLE verify_summaries (
    team_id      BIGINT  NOT NULL REFERENCES teams (id),
    instance_uid UUID    NOT NULL,
    collected_at TIMESTAMPTZ NOT NULL,
    errors       INTEGER NOT NULL CHECK (errors >= 0),
    warnings     INTEGER NOT NULL CHECK (warnings >= 0),
    finding_keys JSONB   NOT NULL,
    shared_by    TEXT    NOT NULL,
    PRIMARY KEY (team_id, instance_uid)
);
