-- What Vast.ai last said of a rental (the keeper's look, in the background every few minutes and
-- whenever the Keeper card asks): whether an interruptible one was outbid, and a host's pending
-- price increase. Status shows an outbid instance as its own state; reminders tell both.
CREATE TABLE vast_looks (
    instance_id    INTEGER PRIMARY KEY NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    looked_at      TEXT    NOT NULL,
    interruptible  INTEGER NOT NULL DEFAULT 0 CHECK (interruptible IN (0, 1)),
    outbid         INTEGER NOT NULL DEFAULT 0 CHECK (outbid IN (0, 1)),
    -- When it was first seen outbid, kept while it stays outbid: one reminder per outbid.
    outbid_since   TEXT,
    -- What Vast.ai bills an hour now (decimal text; outbid, that is the storage) and the lowest
    -- bid per GPU-hour that would win the GPU back.
    per_hour       TEXT,
    min_bid        TEXT,
    -- A host's pending price increase: its id, the price an hour before and after (decimal
    -- text), and when it was first seen.
    increase_id    INTEGER,
    increase_old   TEXT,
    increase_new   TEXT,
    increase_seen  TEXT
);

-- An instance Leasehold itself brought up (a power-on hunt's success, a rental made in the app):
-- until a Verify runs after `asked_at` (or the user says not now), its status says to connect
-- and verify it before working on it.
CREATE TABLE follow_ups (
    instance_id  INTEGER PRIMARY KEY NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    reason       TEXT    NOT NULL CHECK (reason IN ('hunt', 'rent')),
    asked_at     TEXT    NOT NULL
);
