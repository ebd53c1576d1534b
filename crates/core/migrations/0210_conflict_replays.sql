-- The team's conflict report (`team::conflicts`) replays every instance's ledger after each sync,
-- each status and each resolution: ~0.2 s for a 100 000-event team ledger. This keeps each
-- instance's last report with a fingerprint of what it was computed from (its name, the count and
-- last id of its events and rules versions, the resolutions held, the replay code's version), so
-- only the instances whose fingerprint changed are replayed again. Events, rules versions and
-- resolutions are only ever appended, so a count and a last id tell whether any arrived.
CREATE TABLE conflict_replays (
    instance_id INTEGER PRIMARY KEY REFERENCES instances (id) ON DELETE CASCADE,
    fingerprint TEXT    NOT NULL,
    -- The instance's refused events as a JSON array of `team::Conflict`.
    refused     TEXT    NOT NULL
);
