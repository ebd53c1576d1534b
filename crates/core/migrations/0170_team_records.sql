-- Team mode, second part: the records a team shares besides the ledger (budgets and projects of
-- instances, backup records, release checks and overrides, reminders' state), an instance's project, and the
-- team budgets as last pulled (so the team views work offline).
--
-- `team_records` tracks every shareable row: its team-wide key, its version and whether the
-- server holds this version. The triggers below keep it, whatever code writes those tables, so
-- no writer can forget to share. A version is a Lamport clock (one more than any version this
-- database has seen), so a change made after seeing another member's always wins over it. A pull
-- writes the rows and then sets their record to the pulled version, laptop and `shared = 1`.

ALTER TABLE instances ADD COLUMN project TEXT CHECK (project IS NULL OR length(trim(project)) > 0);
ALTER TABLE team_link ADD COLUMN pulled_record_seq INTEGER NOT NULL DEFAULT 0;

CREATE TABLE team_records (
    kind        TEXT    NOT NULL CHECK (kind IN ('budget', 'project', 'backup', 'release_check',
                                                 'release_override', 'reminder')),
    -- The row's id in its table (the instance's id for a budget or a project).
    local_id    INTEGER NOT NULL,
    key         TEXT    NOT NULL,
    version     INTEGER NOT NULL CHECK (version > 0),
    -- The laptop (team_link.laptop_uid) that wrote this version; NULL: this one.
    laptop      TEXT,
    recorded_by TEXT,
    shared      INTEGER NOT NULL DEFAULT 0 CHECK (shared IN (0, 1)),
    PRIMARY KEY (kind, local_id)
);
CREATE UNIQUE INDEX team_records_key ON team_records (kind, key);
CREATE INDEX team_records_version ON team_records (version);
CREATE INDEX team_records_unshared ON team_records (shared) WHERE shared = 0;

-- An instance's project, shared like a budget (the team views sum the month's spend by it).
CREATE TRIGGER team_project_set AFTER UPDATE OF project ON instances
WHEN NEW.project IS NOT OLD.project
BEGIN
    INSERT INTO team_records (kind, local_id, key, version)
    VALUES ('project', NEW.id, NEW.uid, (SELECT coalesce(max(version), 0) + 1 FROM team_records))
    ON CONFLICT (kind, local_id) DO UPDATE SET
        version = excluded.version, laptop = NULL, recorded_by = NULL, shared = 0;
END;

-- The team's monthly budgets as the last pull brought them.
CREATE TABLE team_budgets (
    currency TEXT NOT NULL PRIMARY KEY,
    amount   TEXT NOT NULL,
    set_by   TEXT NOT NULL
);

-- A random UUID, as migration 0140 makes them.
CREATE VIEW team_new_uid AS SELECT lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2)))
    || '-4' || substr(lower(hex(randomblob(2))), 2) || '-'
    || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-'
    || lower(hex(randomblob(6))) AS uid;

-- Rows that exist already are shared on the next sync.
INSERT INTO team_records (kind, local_id, key, version, recorded_by)
    SELECT 'budget', b.instance_id, i.uid, 1, i.recorded_by
    FROM budgets b JOIN instances i ON i.id = b.instance_id;
INSERT INTO team_records (kind, local_id, key, version)
    SELECT 'backup', id, (SELECT uid FROM team_new_uid), 1 FROM backups WHERE instance_id IS NOT NULL;
INSERT INTO team_records (kind, local_id, key, version)
    SELECT 'release_check', id, (SELECT uid FROM team_new_uid), 1 FROM release_checks;
INSERT INTO team_records (kind, local_id, key, version)
    SELECT 'release_override', id, (SELECT uid FROM team_new_uid), 1 FROM release_overrides;
INSERT INTO team_records (kind, local_id, key, version)
    SELECT 'reminder', r.id, i.uid || '/' || r.kind || '/' || r.occurrence, 1
    FROM reminders r JOIN instances i ON i.id = r.instance_id;

CREATE TRIGGER team_budget_set AFTER INSERT ON budgets
BEGIN
    INSERT INTO team_records (kind, local_id, key, version)
    VALUES ('budget', NEW.instance_id, (SELECT uid FROM instances WHERE id = NEW.instance_id),
            (SELECT coalesce(max(version), 0) + 1 FROM team_records))
    ON CONFLICT (kind, local_id) DO UPDATE SET
        version = excluded.version, laptop = NULL, recorded_by = NULL, shared = 0;
END;

CREATE TRIGGER team_budget_changed AFTER UPDATE ON budgets
BEGIN
    INSERT INTO team_records (kind, local_id, key, version)
    VALUES ('budget', NEW.instance_id, (SELECT uid FROM instances WHERE id = NEW.instance_id),
            (SELECT coalesce(max(version), 0) + 1 FROM team_records))
    ON CONFLICT (kind, local_id) DO UPDATE SET
        version = excluded.version, laptop = NULL, recorded_by = NULL, shared = 0;
END;

-- A cleared budget is shared as a removal (the record stays, its body becomes NULL).
CREATE TRIGGER team_budget_cleared AFTER DELETE ON budgets
WHEN EXISTS (SELECT 1 FROM instances WHERE id = OLD.instance_id)
BEGIN
    INSERT INTO team_records (kind, local_id, key, version)
    VALUES ('budget', OLD.instance_id, (SELECT uid FROM instances WHERE id = OLD.instance_id),
            (SELECT coalesce(max(version), 0) + 1 FROM team_records))
    ON CONFLICT (kind, local_id) DO UPDATE SET
        version = excluded.version, laptop = NULL, recorded_by = NULL, shared = 0;
END;

CREATE TRIGGER team_reminder_fired AFTER INSERT ON reminders
BEGIN
    INSERT INTO team_records (kind, local_id, key, version)
    VALUES ('reminder', NEW.id,
            (SELECT uid FROM instances WHERE id = NEW.instance_id) || '/' || NEW.kind || '/'
                || NEW.occurrence,
            (SELECT coalesce(max(version), 0) + 1 FROM team_records))
    ON CONFLICT (kind, local_id) DO UPDATE SET
        version = excluded.version, laptop = NULL, recorded_by = NULL, shared = 0;
END;

CREATE TRIGGER team_reminder_changed AFTER UPDATE ON reminders
BEGIN
    UPDATE team_records SET
        version = (SELECT coalesce(max(version), 0) + 1 FROM team_records),
        laptop = NULL, recorded_by = NULL, shared = 0
    WHERE kind = 'reminder' AND local_id = NEW.id;
END;

CREATE TRIGGER team_backup_recorded AFTER INSERT ON backups WHEN NEW.instance_id IS NOT NULL
BEGIN
    INSERT INTO team_records (kind, local_id, key, version)
    VALUES ('backup', NEW.id, (SELECT uid FROM team_new_uid),
            (SELECT coalesce(max(version), 0) + 1 FROM team_records));
END;

-- Items arrive after their backup: the backup is sent again with them.
CREATE TRIGGER team_backup_item_recorded AFTER INSERT ON backup_items
BEGIN
    UPDATE team_records SET shared = 0 WHERE kind = 'backup' AND local_id = NEW.backup_id;
END;

CREATE TRIGGER team_release_check_recorded AFTER INSERT ON release_checks
BEGIN
    INSERT INTO team_records (kind, local_id, key, version)
    VALUES ('release_check', NEW.id, (SELECT uid FROM team_new_uid),
            (SELECT coalesce(max(version), 0) + 1 FROM team_records));
END;

CREATE TRIGGER team_release_override_recorded AFTER INSERT ON release_overrides
BEGIN
    INSERT INTO team_records (kind, local_id, key, version)
    VALUES ('release_override', NEW.id, (SELECT uid FROM team_new_uid),
            (SELECT coalesce(max(version), 0) + 1 FROM team_records));
END;
