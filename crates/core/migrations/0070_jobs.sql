-- Detached remote jobs (`leasehold job …`, install recipes): where each one runs, what it runs,
-- and the last state and log position seen, so a later attach (another CLI call, the app after
-- a restart) reconnects with what `job start` used and continues at the right byte. No secrets:
-- a password comes from the keychain or `--password-env` again.
CREATE TABLE jobs (
    id             TEXT    PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 1 AND 64),
    instance_id    INTEGER REFERENCES instances (id) ON DELETE SET NULL,
    -- `user@host:port`, for lists and for export-setup without a recorded instance.
    target         TEXT    NOT NULL,
    ssh_command    TEXT    NOT NULL CHECK (length(trim(ssh_command)) > 0),
    identity_files TEXT    NOT NULL CHECK (json_valid(identity_files)),
    known_hosts    TEXT,
    name           TEXT,
    -- NULL for a plain command (`job start -- CMD`).
    recipe         TEXT,
    options        TEXT    NOT NULL CHECK (json_valid(options)),
    -- The exact script run, so export-setup replays what really ran.
    script         TEXT    NOT NULL,
    state          TEXT    NOT NULL CHECK (state IN ('running', 'succeeded', 'failed', 'cancelled', 'lost')),
    exit_code      INTEGER,
    log_bytes      INTEGER NOT NULL DEFAULT 0 CHECK (log_bytes >= 0),
    -- Bytes of the log already delivered to the user (where the next attach continues).
    last_offset    INTEGER NOT NULL DEFAULT 0 CHECK (last_offset >= 0),
    created_at     TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL
);
CREATE INDEX jobs_instance ON jobs (instance_id, created_at);
CREATE INDEX jobs_target ON jobs (target, created_at);
