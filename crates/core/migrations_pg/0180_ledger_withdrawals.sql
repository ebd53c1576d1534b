-- A member's resolution of a conflict (see the SQLite migration 0180): event `event_uid` is left
-- out of every bill, `kept_uid` kept. Appended, never edited, like the events.
CREATE TABLE ledger_withdrawals (
    uid          UUID   PRIMARY KEY,
    team_id      BIGINT NOT NULL REFERENCES teams (id),
    instance_uid UUID   NOT NULL REFERENCES instances (uid),
    event_uid    UUID   NOT NULL,
    kept_uid     UUID   NOT NULL,
    recorded_by  TEXT   NOT NULL,
    at           TEXT   NOT NULL,
    pushed_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX ledger_withdrawals_team ON ledger_withdrawals (team_id);
