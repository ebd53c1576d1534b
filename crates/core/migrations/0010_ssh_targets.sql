-- Where and how each rental is reached over SSH, as the Connect wizard saved it. No secrets:
-- passwords and key passphrases live in the OS keychain only. One target per instance; saving
-- again (new port or password after AutoDL powers the machine on again) replaces it.
CREATE TABLE ssh_targets (
    instance_id INTEGER PRIMARY KEY NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    ssh_command TEXT    NOT NULL CHECK (length(trim(ssh_command)) > 0),
    auth_method TEXT    NOT NULL CHECK (auth_method IN ('key', 'agent', 'password')),
    key_path    TEXT,
    host        TEXT    NOT NULL,
    port        INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
    user        TEXT    NOT NULL,
    saved_at    TEXT    NOT NULL,
    CHECK ((auth_method = 'key') = (key_path IS NOT NULL))
);
