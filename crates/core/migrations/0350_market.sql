-- The market: each provider's last good catalog snapshot (stale-while-revalidate: a failed
-- refresh keeps it and only records the failure and its back-off), and the renter's alerts.
CREATE TABLE market_snapshots (
    provider TEXT PRIMARY KEY,
    -- The checked offers as JSON (market::Offer), capped per provider.
    offers TEXT NOT NULL DEFAULT '[]',
    -- When the offers above were fetched; NULL until a refresh went through.
    fetched_at TEXT,
    -- The last refresh's failure, in plain words (NULL when it went through).
    last_error TEXT,
    failed_at TEXT,
    failures INTEGER NOT NULL DEFAULT 0,
    -- No request before this (after 429s and failures).
    next_refresh_after TEXT
);

CREATE TABLE market_alerts (
    id INTEGER PRIMARY KEY,
    gpu TEXT NOT NULL,
    -- 'below' (a price per GPU-hour under `below` in `currency`) or 'in_stock'.
    kind TEXT NOT NULL,
    below TEXT,
    currency TEXT,
    region TEXT,
    created_at TEXT NOT NULL,
    -- At most one message per alert per hour.
    last_fired_at TEXT
);
