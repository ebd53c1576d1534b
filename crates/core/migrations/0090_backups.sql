-- Backups and release checks. A backup is one run of `backup run` (or the Back up page): where
-- it went on this computer and what it saved, item by item, with the SHA-256 that proved each
-- copy (a file's own hash; for a folder, the hash of its per-file manifest). Release checks are
-- the checklist's results as run against the instance, and overrides the reasons a user gave
-- for releasing despite a blocked check. Nothing here is a secret.
CREATE TABLE backups (
    id          INTEGER PRIMARY KEY,
    instance_id INTEGER REFERENCES instances (id) ON DELETE SET NULL,
    -- `user@host:port`, for backups of a target that is no recorded instance.
    target      TEXT    NOT NULL,
    local_dir   TEXT    NOT NULL,
    started_at  TEXT    NOT NULL,
    finished_at TEXT    NOT NULL,
    files       INTEGER NOT NULL CHECK (files >= 0),
    bytes       INTEGER NOT NULL CHECK (bytes >= 0)
);
CREATE INDEX backups_instance ON backups (instance_id, started_at);

CREATE TABLE backup_items (
    id          INTEGER PRIMARY KEY,
    backup_id   INTEGER NOT NULL REFERENCES backups (id) ON DELETE CASCADE,
    kind        TEXT    NOT NULL CHECK (kind IN ('file', 'folder', 'packed_folder', 'environment',
                                                 'git_push', 'file_storage')),
    remote_path TEXT    NOT NULL,
    local_path  TEXT,
    files       INTEGER NOT NULL CHECK (files >= 0),
    bytes       INTEGER NOT NULL CHECK (bytes >= 0),
    sha256      TEXT CHECK (sha256 IS NULL OR length(sha256) = 64),
    detail      TEXT
);
CREATE INDEX backup_items_backup ON backup_items (backup_id);

CREATE TABLE release_checks (
    id          INTEGER PRIMARY KEY,
    instance_id INTEGER NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    at          TEXT    NOT NULL,
    blocked     INTEGER NOT NULL CHECK (blocked IN (0, 1)),
    checks      TEXT    NOT NULL CHECK (json_valid(checks))
);
CREATE INDEX release_checks_instance ON release_checks (instance_id, at);

CREATE TABLE release_overrides (
    id          INTEGER PRIMARY KEY,
    instance_id INTEGER NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    check_id    INTEGER REFERENCES release_checks (id) ON DELETE SET NULL,
    -- A check's code, or `release.no_check` for a release without any check.
    code        TEXT    NOT NULL,
    reason      TEXT    NOT NULL CHECK (length(trim(reason)) > 0),
    at          TEXT    NOT NULL
);
CREATE INDEX release_overrides_instance ON release_overrides (instance_id, at);
