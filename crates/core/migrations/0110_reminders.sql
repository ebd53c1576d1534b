-- Reminders: what fired, when, and what the user snoozed or dismissed, so a restart neither
-- loses a reminder that came due while the app was closed nor repeats one already shown. One row
-- per occurrence (an instance, a kind, and the occurrence key the trigger gives it: the budget
-- amount, the planned hours, the wipe date, the start of an idle stretch).
CREATE TABLE reminders (
    id            INTEGER PRIMARY KEY,
    instance_id   INTEGER NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    kind          TEXT    NOT NULL,
    occurrence    TEXT    NOT NULL,
    due_at        TEXT    NOT NULL,
    fired_at      TEXT    NOT NULL,
    -- Recorded behind a more urgent reminder of the same family while catching up (after a
    -- sleep): counted as shown, never sent on its own.
    silent        INTEGER NOT NULL DEFAULT 0 CHECK (silent IN (0, 1)),
    snoozed_until TEXT,
    dismissed_at  TEXT,
    UNIQUE (instance_id, kind, occurrence)
);

-- The user's reminder rules (thresholds, lead times, quiet hours) as one JSON value.
CREATE TABLE reminder_rules (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    rules      TEXT    NOT NULL CHECK (json_valid(rules)),
    updated_at TEXT    NOT NULL
);

-- Webhooks the reminders are sent to. Only the kind and a label live here: the URL and the
-- signing secret are in the OS keychain under the row's id.
CREATE TABLE webhooks (
    id         INTEGER PRIMARY KEY,
    kind       TEXT    NOT NULL CHECK (kind IN ('wecom', 'feishu', 'dingtalk', 'slack', 'serverchan', 'json')),
    label      TEXT    NOT NULL,
    has_secret INTEGER NOT NULL DEFAULT 0 CHECK (has_secret IN (0, 1)),
    created_at TEXT    NOT NULL
);
