-- A price the renter said is right (issue 37): the instance page's "this price looks wrong" flag
-- stays until then, and comes back when the price changes to one that looks wrong again.
CREATE TABLE price_acknowledgements (
    instance_id        INTEGER PRIMARY KEY NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    -- The price per GPU-hour and its currency as they were when acknowledged (decimal text).
    price_per_gpu_hour TEXT    NOT NULL,
    currency           TEXT    NOT NULL,
    acknowledged_at    TEXT    NOT NULL
);
