-- Verify runs: the facts and findings of each probe battery, as JSON, so the app can show a
-- machine's history and what changed since the last run. A run belongs to a recorded instance
-- when the user named one; otherwise it is kept by target (e.g. `root@host:22`, `this computer`).

CREATE TABLE probe_runs (
    id           INTEGER PRIMARY KEY,
    instance_id  INTEGER REFERENCES instances (id) ON DELETE CASCADE,
    target       TEXT    NOT NULL,
    collected_at TEXT    NOT NULL,
    facts        TEXT    NOT NULL CHECK (json_valid(facts)),
    findings     TEXT    NOT NULL CHECK (json_valid(findings)),
    -- Each finding's language-independent key (code@subject), in the order of `findings`.
    finding_keys TEXT    NOT NULL CHECK (json_valid(finding_keys)),
    errors       INTEGER NOT NULL CHECK (errors >= 0),
    warnings     INTEGER NOT NULL CHECK (warnings >= 0)
);
CREATE INDEX probe_runs_instance ON probe_runs (instance_id, collected_at);
CREATE INDEX probe_runs_target ON probe_runs (target, collected_at);
