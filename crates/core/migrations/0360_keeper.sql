-- The keeper: one hunt per instance (asking the provider to power it on until a GPU frees up),
-- kept here so a hunt survives a restart of the app or the CLI, and each instance's two-stage
-- policy (stop when idle, then release or remind when stopped). The default policy is a
-- setting (`keeper.default_policy`).
CREATE TABLE keeper_hunts (
    instance_id    INTEGER PRIMARY KEY NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    started_at     TEXT    NOT NULL,
    deadline       TEXT    NOT NULL,
    every_min_s    INTEGER NOT NULL CHECK (every_min_s >= 1),
    every_max_s    INTEGER NOT NULL CHECK (every_max_s >= every_min_s),
    -- A decimal amount in the instance's currency; NULL: no spending limit.
    max_spend      TEXT,
    -- What the ledger had the instance costing when the hunt started (decimal).
    spent_at_start TEXT    NOT NULL,
    tries          INTEGER NOT NULL DEFAULT 0,
    next_try_at    TEXT    NOT NULL,
    last_answer    TEXT    NOT NULL DEFAULT '',
    state          TEXT    NOT NULL CHECK (state IN ('hunting', 'on', 'given_up', 'stopped')),
    gave_up        TEXT    CHECK (gave_up IN ('time', 'spend', 'refused')),
    powered_on_at  TEXT,
    -- When the success was told (tray, notice, webhooks): told once.
    told_at        TEXT
);

CREATE TABLE keeper_policies (
    instance_id              INTEGER PRIMARY KEY NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    stop_after_idle_s        INTEGER CHECK (stop_after_idle_s > 0),
    release_after_stopped_s  INTEGER CHECK (release_after_stopped_s > 0),
    auto_release             INTEGER NOT NULL DEFAULT 0 CHECK (auto_release IN (0, 1)),
    off                      INTEGER NOT NULL DEFAULT 0 CHECK (off IN (0, 1)),
    -- The highest bid (decimal, per GPU-hour) `account bid` may place on a Vast.ai
    -- interruptible instance; NULL: no cap.
    bid_cap                  TEXT
);
