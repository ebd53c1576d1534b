-- One row per instance, GPU and minute: the live monitor's samples downsampled, so the history,
-- the GPU-busy hours on the bill and the "GPU idle while billing" reminder read minutes instead
-- of seconds. The dashboard's stream and the background sampler may both write the same minute:
-- the repository merges them (weighted average, maxima), so neither overwrites the other.
CREATE TABLE gpu_minutes (
    instance_id          INTEGER NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    gpu_index            INTEGER NOT NULL CHECK (gpu_index >= 0),
    minute               TEXT    NOT NULL,
    samples              INTEGER NOT NULL CHECK (samples > 0),
    utilization_avg      REAL    NOT NULL,
    utilization_max      INTEGER NOT NULL,
    memory_used_max_mib  INTEGER NOT NULL,
    memory_total_mib     INTEGER NOT NULL,
    power_avg_w          REAL,
    PRIMARY KEY (instance_id, minute, gpu_index)
);
