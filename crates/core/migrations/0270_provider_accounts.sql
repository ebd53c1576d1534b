-- Provider accounts: the provider's own view of what it bills, next to what the renter recorded.
-- The API key is never here (OS keychain); `key_env` is only the name of the environment variable
-- the key was read from, for machines without a keychain (a headless CI box).
CREATE TABLE provider_accounts (
    id INTEGER PRIMARY KEY,
    provider TEXT NOT NULL,
    label TEXT NOT NULL,
    key_env TEXT,
    added_at TEXT NOT NULL,
    last_sync_at TEXT,
    last_error TEXT,
    -- When the next background sync may run (back-off after 429s and errors).
    next_sync_after TEXT,
    failures INTEGER NOT NULL DEFAULT 0,
    UNIQUE (provider, label)
);

-- Which ledger instance is which of the provider's instances, and what the last sync saw.
CREATE TABLE account_instances (
    instance_id INTEGER PRIMARY KEY REFERENCES instances (id) ON DELETE CASCADE,
    account_id INTEGER NOT NULL REFERENCES provider_accounts (id) ON DELETE CASCADE,
    remote_id TEXT NOT NULL,
    -- running / stopped / starting / error / gone, as the last sync read it.
    remote_state TEXT NOT NULL,
    -- The last sync that saw `remote_state`: a change is never dated before it.
    seen_at TEXT NOT NULL,
    -- 1 when the sync recorded the instance itself (nobody had).
    imported INTEGER NOT NULL DEFAULT 0,
    -- 0 until the renter named or kept an imported instance (the "new instance" card).
    acknowledged INTEGER NOT NULL DEFAULT 1,
    -- Where the ledger disagreed with the provider when linked or synced, in plain words.
    note TEXT,
    UNIQUE (account_id, remote_id)
);

-- AutoDL reports only the account's total spend (`accumulate`): each sync keeps it, and the
-- difference between two syncs is what was charged in between.
CREATE TABLE account_spend (
    account_id INTEGER NOT NULL REFERENCES provider_accounts (id) ON DELETE CASCADE,
    at TEXT NOT NULL,
    total TEXT NOT NULL,
    currency TEXT NOT NULL,
    PRIMARY KEY (account_id, at)
);
