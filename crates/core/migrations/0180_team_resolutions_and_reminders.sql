-- Resolving a team conflict. Events are immutable, so choosing between two that cannot both stand
-- (two `released` of one instance from two laptops) is itself a new record: "from now on, leave
-- event X out of every bill; event Y is the one kept". It is shared with the team like an event,
-- so every laptop replays the same ledger and computes the same bill. The withdrawn event stays
-- in `ledger_events`, untouched.
CREATE TABLE ledger_withdrawals (
    uid          TEXT    PRIMARY KEY NOT NULL,
    instance_uid TEXT    NOT NULL,
    -- The event left out of the replay from now on.
    event_uid    TEXT    NOT NULL,
    -- The event chosen instead.
    kept_uid     TEXT    NOT NULL,
    recorded_by  TEXT    NOT NULL,
    at           TEXT    NOT NULL,
    -- 1 once the team's server holds it.
    shared       INTEGER NOT NULL DEFAULT 0 CHECK (shared IN (0, 1))
);
CREATE INDEX ledger_withdrawals_event ON ledger_withdrawals (event_uid);

-- The events withdrawn now. Two members may resolve the same conflict both ways before they
-- sync; the earlier decision (by time, then uid: the same on every laptop) stands, and a later
-- one that withdraws the event the earlier one kept is void, so one of the two always stays.
CREATE VIEW withdrawn_events AS
SELECT w.event_uid
FROM ledger_withdrawals w
WHERE NOT EXISTS (
    SELECT 1 FROM ledger_withdrawals e
    WHERE e.event_uid = w.kept_uid AND (e.at < w.at OR (e.at = w.at AND e.uid < w.uid))
);

-- Team budget reminders (`remind::team`): which team reminders fired, so each threshold of each
-- month fires once on this laptop. (The budgets are `team_budgets`, migration 0170.)
CREATE TABLE team_reminders (
    team       TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    occurrence TEXT    NOT NULL,
    due_at     TEXT    NOT NULL,
    fired_at   TEXT    NOT NULL,
    -- Recorded behind a more urgent one of the same budget while catching up: never sent alone.
    silent     INTEGER NOT NULL DEFAULT 0 CHECK (silent IN (0, 1)),
    PRIMARY KEY (team, kind, occurrence)
);
