//! Rows of `gpu_minutes`: one per instance, GPU and minute, written by the monitor's
//! downsampling (`crate::monitor::history`) and read back for history, busy hours and reminders.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, SqliteConnection};

use super::StoreError;

#[derive(Debug, Clone, PartialEq, FromRow)]
pub struct GpuMinuteRow {
    pub instance_id: i64,
    pub gpu_index: i64,
    /// The minute's start (seconds zero).
    pub minute: DateTime<Utc>,
    pub samples: i64,
    pub utilization_avg: f64,
    pub utilization_max: i64,
    pub memory_used_max_mib: i64,
    pub memory_total_mib: i64,
    pub power_avg_w: Option<f64>,
}

/// Add `row` to its minute: a minute already written (by the other sampler, or an earlier flush)
/// is merged — sample-weighted averages, maxima kept — so no writer overwrites another's samples.
pub async fn merge(conn: &mut SqliteConnection, row: &GpuMinuteRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO gpu_minutes (instance_id, gpu_index, minute, samples, utilization_avg,
                                  utilization_max, memory_used_max_mib, memory_total_mib, power_avg_w)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (instance_id, minute, gpu_index) DO UPDATE SET
           utilization_avg = (utilization_avg * samples + excluded.utilization_avg * excluded.samples)
                             / (samples + excluded.samples),
           power_avg_w = CASE
             WHEN power_avg_w IS NULL THEN excluded.power_avg_w
             WHEN excluded.power_avg_w IS NULL THEN power_avg_w
             ELSE (power_avg_w * samples + excluded.power_avg_w * excluded.samples)
                  / (samples + excluded.samples) END,
           samples = samples + excluded.samples,
           utilization_max = max(utilization_max, excluded.utilization_max),
           memory_used_max_mib = max(memory_used_max_mib, excluded.memory_used_max_mib),
           memory_total_mib = max(memory_total_mib, excluded.memory_total_mib)",
    )
    .bind(row.instance_id)
    .bind(row.gpu_index)
    .bind(row.minute)
    .bind(row.samples)
    .bind(row.utilization_avg)
    .bind(row.utilization_max)
    .bind(row.memory_used_max_mib)
    .bind(row.memory_total_mib)
    .bind(row.power_avg_w)
    .execute(conn)
    .await?;
    Ok(())
}

/// Every row of `instance_id` from `since` (inclusive) to `until` (exclusive), oldest first.
pub async fn between(
    conn: &mut SqliteConnection,
    instance_id: i64,
    since: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Vec<GpuMinuteRow>, StoreError> {
    Ok(sqlx::query_as::<_, GpuMinuteRow>(
        "SELECT * FROM gpu_minutes WHERE instance_id = ? AND minute >= ? AND minute < ?
         ORDER BY minute, gpu_index",
    )
    .bind(instance_id)
    .bind(since)
    .bind(until)
    .fetch_all(conn)
    .await?)
}
