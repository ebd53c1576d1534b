-- After a stop recorded by hand ("already stopped at the provider"), Leasehold looks again
-- (a fresh SSH login, or the provider's API) whether the machine still answers. The newest
-- look per instance; a look that found it answering raises `stop_contradicted` until the
-- instance is started again, released, or a later look finds it silent.
CREATE TABLE stop_checks (
    instance_id INTEGER PRIMARY KEY NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    checked_at  TEXT    NOT NULL,
    -- 1: it answered (the stop is contradicted); 0: silent.
    answered    INTEGER NOT NULL CHECK (answered IN (0, 1)),
    -- How it was looked at: 'ssh' or 'api'.
    via         TEXT    NOT NULL CHECK (via IN ('ssh', 'api'))
);
