-- A random id of this database file, made once when the migration runs. Names outside the
-- file that belong to it (the keychain entries of its webhooks) carry it, so two databases
-- (`--db`) never overwrite each other's entries.
CREATE TABLE database_identity (
    only INTEGER PRIMARY KEY CHECK (only = 1),
    id TEXT NOT NULL
);
INSERT INTO database_identity (only, id) VALUES (1, lower(hex(randomblob(16))));
