-- Team mode (a shared ledger on PostgreSQL): ids that are unique across every laptop of a team,
-- the member who recorded each row, and which events have reached the team's server.
--
-- Ids are UUIDs as text. Rows that existed before get theirs here; rows inserted later get theirs
-- from the triggers below, whatever code inserts them, so no writer can forget one. A row pulled
-- from the team arrives with its id, member and origin position already set.

ALTER TABLE instances ADD COLUMN uid TEXT;
ALTER TABLE instances ADD COLUMN recorded_by TEXT;
ALTER TABLE billing_rules ADD COLUMN uid TEXT;
ALTER TABLE ledger_events ADD COLUMN uid TEXT;
ALTER TABLE ledger_events ADD COLUMN recorded_by TEXT;
-- The event's position in the log of the laptop that recorded it: breaks ties between events of
-- one instance at the same instant, identically on every laptop.
ALTER TABLE ledger_events ADD COLUMN origin_seq INTEGER;
-- 1 once the team's server holds the event (pushed from here, or pulled from there).
ALTER TABLE ledger_events ADD COLUMN shared INTEGER NOT NULL DEFAULT 0 CHECK (shared IN (0, 1));

-- The one team this database is linked to (none until `team connect`). The URL is kept without
-- its password: the password lives in the OS keychain only.
CREATE TABLE team_link (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    url          TEXT    NOT NULL,
    member       TEXT    NOT NULL CHECK (length(trim(member)) > 0),
    team         TEXT    NOT NULL CHECK (length(trim(team)) > 0),
    team_id      INTEGER NOT NULL,
    -- This database's own id in the team: a pull skips what this laptop pushed itself.
    laptop_uid   TEXT    NOT NULL,
    -- The server sequence number of the last event pulled; pulling resumes after it.
    pulled_seq   INTEGER NOT NULL DEFAULT 0,
    connected_at TEXT    NOT NULL,
    last_sync_at TEXT
);

-- What a pull found that cannot simply be merged and must be shown to the user: a shared
-- instance whose name was taken here by a different instance (kept under another name), or a
-- row from the server this version cannot read. Events the billing rules refuse after a merge
-- (two releases) are not stored here: they are found again by every replay.
CREATE TABLE team_conflicts (
    key           TEXT PRIMARY KEY NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('name_collision', 'unreadable')),
    instance_uid  TEXT NOT NULL,
    instance_name TEXT NOT NULL,
    member        TEXT NOT NULL,
    detail        TEXT NOT NULL,
    found_at      TEXT NOT NULL
);

UPDATE instances SET uid = lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4'
    || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1)
    || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)));
UPDATE billing_rules SET uid = lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4'
    || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1)
    || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)));
UPDATE ledger_events SET origin_seq = id, uid = lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4'
    || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1)
    || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)));

CREATE UNIQUE INDEX instances_uid ON instances (uid);
CREATE UNIQUE INDEX billing_rules_uid ON billing_rules (uid);
CREATE UNIQUE INDEX ledger_events_uid ON ledger_events (uid);
CREATE INDEX ledger_events_unshared ON ledger_events (shared) WHERE shared = 0;
-- The canonical replay order (`store::ledger::events_for`), so loading a long ledger needs no sort.
CREATE INDEX ledger_events_canonical
    ON ledger_events (instance_id, at, coalesce(recorded_by, ''), coalesce(origin_seq, id), uid);

CREATE TRIGGER instances_new_uid AFTER INSERT ON instances WHEN NEW.uid IS NULL
BEGIN
    UPDATE instances SET
        uid = lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4'
            || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1)
            || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))),
        recorded_by = coalesce(NEW.recorded_by, (SELECT member FROM team_link))
    WHERE id = NEW.id;
END;

CREATE TRIGGER billing_rules_new_uid AFTER INSERT ON billing_rules WHEN NEW.uid IS NULL
BEGIN
    UPDATE billing_rules SET
        uid = lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4'
            || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1)
            || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))
    WHERE id = NEW.id;
END;

CREATE TRIGGER ledger_events_new_uid AFTER INSERT ON ledger_events WHEN NEW.uid IS NULL
BEGIN
    UPDATE ledger_events SET
        uid = lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4'
            || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1)
            || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))),
        origin_seq = coalesce(NEW.origin_seq, NEW.id),
        recorded_by = coalesce(NEW.recorded_by, (SELECT member FROM team_link))
    WHERE id = NEW.id;
END;
