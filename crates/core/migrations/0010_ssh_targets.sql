-- Where each instance is reached over SSH. No secrets here: passwords and key passphrases live
-- in the OS keychain under "ssh-password:user@host:port" / "ssh-passphrase:PATH".
CREATE TABLE ssh_targets (
    instance_id          INTEGER PRIMARY KEY REFERENCES instances (id) ON DELETE CASCADE,
    host                 TEXT    NOT NULL CHECK (length(trim(host)) > 0),
    port                 INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
    user                 TEXT    NOT NULL CHECK (length(user) > 0),
    identity_file        TEXT,
    -- ProxyJump hops, comma-separated, outermost first; '' when direct.
    jump                 TEXT    NOT NULL DEFAULT '',
    auth                 TEXT    NOT NULL CHECK (auth IN ('key', 'agent', 'password')),
    -- SHA256 fingerprint confirmed by the user on first connect (also in known_hosts).
    host_key_fingerprint TEXT,
    updated_at           TEXT    NOT NULL
);
