-- The team's shared ledger on PostgreSQL. Every laptop keeps its own SQLite working copy and
-- pushes/pulls here; nothing in this database is ever edited in place, only appended.
--
-- Times of events are kept as the exact RFC 3339 text the recording laptop wrote (timestamptz
-- would round to microseconds, and every laptop must replay exactly the same instants).
-- Money is decimal text, as in the local ledger.

CREATE TABLE teams (
    id         BIGSERIAL PRIMARY KEY,
    name       TEXT   NOT NULL UNIQUE CHECK (length(btrim(name)) > 0),
    -- The last sequence number handed out; bumping it (a row lock held to commit) orders the
    -- team's pushes, so sequence order is commit order and a puller never skips a late commit.
    last_seq   BIGINT NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE members (
    team_id      BIGINT NOT NULL REFERENCES teams (id),
    name         TEXT   NOT NULL CHECK (length(btrim(name)) > 0),
    joined_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_sync_at TIMESTAMPTZ,
    PRIMARY KEY (team_id, name)
);

CREATE TABLE instances (
    uid           UUID   PRIMARY KEY,
    team_id       BIGINT NOT NULL REFERENCES teams (id),
    name          TEXT   NOT NULL,
    provider      TEXT   NOT NULL,
    region        TEXT,
    gpu_model     TEXT   NOT NULL,
    currency      TEXT   NOT NULL,
    notes         TEXT,
    planned_hours TEXT,
    created_at    TEXT   NOT NULL,
    recorded_by   TEXT   NOT NULL
);

CREATE TABLE ledger_events (
    uid          UUID   PRIMARY KEY,
    team_id      BIGINT NOT NULL REFERENCES teams (id),
    seq          BIGINT NOT NULL,
    instance_uid UUID   NOT NULL REFERENCES instances (uid),
    kind         TEXT   NOT NULL CHECK (kind IN ('created', 'started', 'stopped', 'no_gpu_started',
                                                 'released', 'rule_changed', 'traffic_recorded')),
    at           TEXT   NOT NULL,
    recorded_by  TEXT   NOT NULL,
    origin_seq   BIGINT NOT NULL,
    -- The database (laptop) that pushed it, so that laptop's pull can skip it.
    laptop       UUID   NOT NULL,
    traffic_gb   TEXT,
    -- The rules version a `created`/`rule_changed` event puts in effect (decimals as strings).
    rules        JSONB,
    pushed_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK ((kind IN ('created', 'rule_changed')) = (rules IS NOT NULL)),
    CHECK ((kind = 'traffic_recorded') = (traffic_gb IS NOT NULL))
);
CREATE UNIQUE INDEX ledger_events_team_seq ON ledger_events (team_id, seq);
CREATE INDEX ledger_events_instance ON ledger_events (instance_uid);

-- A budget for the whole team per month, in one currency; the same 50/80/100 % warnings as an
-- instance's budget.
CREATE TABLE team_budgets (
    team_id  BIGINT NOT NULL REFERENCES teams (id),
    currency TEXT   NOT NULL,
    amount   TEXT   NOT NULL,
    set_by   TEXT   NOT NULL,
    set_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, currency)
);
