-- The rental ledger: instances, their billing rules versioned by effective time, the
-- append-only event log the cost is computed from, and per-instance budgets.
-- Money is stored as decimal TEXT (never REAL); times as UTC TEXT.

CREATE TABLE instances (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE CHECK (length(trim(name)) > 0),
    provider      TEXT    NOT NULL,
    region        TEXT,
    gpu_model     TEXT    NOT NULL,
    currency      TEXT    NOT NULL,
    notes         TEXT,
    planned_hours TEXT,
    created_at    TEXT    NOT NULL
);

CREATE TABLE billing_rules (
    id                      INTEGER PRIMARY KEY,
    instance_id             INTEGER NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    effective_from          TEXT    NOT NULL,
    price_per_gpu_hour      TEXT    NOT NULL,
    gpu_count               INTEGER NOT NULL CHECK (gpu_count > 0),
    billing_starts          TEXT    NOT NULL CHECK (billing_starts IN ('created', 'running')),
    stopped_billing         TEXT    NOT NULL CHECK (stopped_billing IN ('none', 'storage', 'rate')),
    stopped_rate            TEXT,
    no_gpu_rate             TEXT,
    data_disk_per_hour      TEXT    NOT NULL,
    snapshot_per_hour       TEXT    NOT NULL,
    public_ip_per_hour      TEXT    NOT NULL,
    traffic_per_gb          TEXT    NOT NULL,
    granularity             TEXT    NOT NULL CHECK (granularity IN ('second', 'minute', 'hour')),
    wipe_after_stopped_days INTEGER
);
CREATE INDEX billing_rules_instance ON billing_rules (instance_id, effective_from);

CREATE TABLE ledger_events (
    id          INTEGER PRIMARY KEY,
    instance_id INTEGER NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    kind        TEXT    NOT NULL CHECK (kind IN ('created', 'started', 'stopped', 'no_gpu_started',
                                                 'released', 'rule_changed', 'traffic_recorded')),
    at          TEXT    NOT NULL,
    rules_id    INTEGER REFERENCES billing_rules (id),
    traffic_gb  TEXT,
    CHECK ((kind IN ('created', 'rule_changed')) = (rules_id IS NOT NULL)),
    CHECK ((kind = 'traffic_recorded') = (traffic_gb IS NOT NULL))
);
CREATE INDEX ledger_events_instance ON ledger_events (instance_id, id);

CREATE TABLE budgets (
    instance_id INTEGER PRIMARY KEY REFERENCES instances (id) ON DELETE CASCADE,
    amount      TEXT    NOT NULL
);
