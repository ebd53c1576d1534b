-- The newest look at each instance's watchdog (issue 35): the instance's status says "not
-- protecting" from it without dialling the instance again. Written whenever the app or the CLI
-- reads the watchdog's status; a look is only as fresh as `looked_at`.
CREATE TABLE watchdog_looks (
    instance_id INTEGER PRIMARY KEY NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    looked_at   TEXT    NOT NULL,
    installed   INTEGER NOT NULL CHECK (installed IN (0, 1)),
    running     INTEGER NOT NULL CHECK (running IN (0, 1)),
    -- `grace`, `watching`, `idle`, `powering_off` or `powered_off` at the latest sample.
    phase       TEXT,
    -- The signals it could not read at the latest sample, comma-separated (`gpu,net`); each one
    -- holds the power-off back for good, since an unreadable signal counts as busy.
    unreadable  TEXT    NOT NULL DEFAULT ''
);
