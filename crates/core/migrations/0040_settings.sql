-- What the user chose (language, default currency, first run done) and unfinished wizard drafts,
-- one JSON value per key, so a new preference needs no new migration.
CREATE TABLE settings (
    key        TEXT PRIMARY KEY NOT NULL,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
