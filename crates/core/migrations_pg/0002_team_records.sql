-- Team mode, second part: what a team shares besides the ledger.
--
-- A shared record is one row per (team, kind, key): a budget or project of an instance, a backup record, a
-- release check or override, a reminder's state (fired, snoozed, dismissed). Each push numbers
-- it from the team's counter (`teams.last_seq`, the same commit order as the events), so a pull
-- fetches "every record after my cursor". A record changed on two laptops keeps the version with
-- the higher (version, laptop): versions are Lamport clocks, so a change made after seeing
-- another one always wins over it, and every laptop and the server pick the same winner. The
-- body is the record's content as JSON; NULL means the record was removed (a cleared budget).

CREATE TABLE shared_records (
    team_id      BIGINT NOT NULL REFERENCES teams (id),
    kind         TEXT   NOT NULL CHECK (length(kind) > 0),
    key          TEXT   NOT NULL CHECK (length(key) > 0),
    instance_uid UUID   REFERENCES instances (uid),
    body         JSONB,
    version      BIGINT NOT NULL CHECK (version > 0),
    -- The laptop that wrote this version (its own pull skips it) and its member.
    laptop       UUID   NOT NULL,
    recorded_by  TEXT   NOT NULL,
    seq          BIGINT NOT NULL,
    pushed_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, kind, key)
);
CREATE INDEX shared_records_seq ON shared_records (team_id, seq);
