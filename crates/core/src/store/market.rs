//! Rows of `market_snapshots` (one per provider: its last good offers as JSON, and the
//! failures since) and `market_alerts`. `market` reads the JSON and the rules.

use chrono::{DateTime, Utc};
use sqlx::SqliteConnection;

use super::StoreError;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SnapshotRow {
    pub provider: String,
    pub offers: String,
    pub fetched_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub failed_at: Option<DateTime<Utc>>,
    pub next_refresh_after: Option<DateTime<Utc>>,
}

pub async fn snapshots(conn: &mut SqliteConnection) -> Result<Vec<SnapshotRow>, StoreError> {
    Ok(sqlx::query_as::<_, SnapshotRow>(
        "SELECT provider, offers, fetched_at, last_error, failed_at, next_refresh_after
         FROM market_snapshots ORDER BY provider",
    )
    .fetch_all(conn)
    .await?)
}

/// A good refresh: its offers kept, the failures forgotten.
pub async fn save_offers(
    conn: &mut SqliteConnection,
    provider: &str,
    offers_json: String,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO market_snapshots (provider, offers, fetched_at, failures)
         VALUES (?, ?, ?, 0)
         ON CONFLICT (provider) DO UPDATE SET offers = excluded.offers,
             fetched_at = excluded.fetched_at, last_error = NULL, failed_at = NULL,
             failures = 0, next_refresh_after = NULL",
    )
    .bind(provider)
    .bind(offers_json)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}

/// How many refreshes of `provider` failed in a row (0 when never refreshed).
pub async fn failures(conn: &mut SqliteConnection, provider: &str) -> Result<i64, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT failures FROM market_snapshots WHERE provider = ?")
            .bind(provider)
            .fetch_optional(conn)
            .await?
            .unwrap_or(0),
    )
}

/// A failed refresh: the offers kept, the failure counted, the next request held back.
pub async fn save_failure(
    conn: &mut SqliteConnection,
    provider: &str,
    error: &str,
    now: DateTime<Utc>,
    next_refresh_after: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO market_snapshots (provider, last_error, failed_at, failures, next_refresh_after)
         VALUES (?, ?, ?, 1, ?)
         ON CONFLICT (provider) DO UPDATE SET last_error = excluded.last_error,
             failed_at = excluded.failed_at, failures = market_snapshots.failures + 1,
             next_refresh_after = excluded.next_refresh_after",
    )
    .bind(provider)
    .bind(error)
    .bind(now)
    .bind(next_refresh_after)
    .execute(conn)
    .await?;
    Ok(())
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AlertRow {
    pub id: i64,
    pub gpu: String,
    pub kind: String,
    pub below: Option<String>,
    pub currency: Option<String>,
    pub region: Option<String>,
    pub created_at: DateTime<Utc>,
    pub last_fired_at: Option<DateTime<Utc>>,
}

/// A new alert; its id.
pub async fn insert_alert(conn: &mut SqliteConnection, row: &AlertRow) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(
        "INSERT INTO market_alerts (gpu, kind, below, currency, region, created_at)
         VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(&row.gpu)
    .bind(&row.kind)
    .bind(&row.below)
    .bind(&row.currency)
    .bind(&row.region)
    .bind(row.created_at)
    .fetch_one(conn)
    .await?)
}

pub async fn alerts(conn: &mut SqliteConnection) -> Result<Vec<AlertRow>, StoreError> {
    Ok(sqlx::query_as::<_, AlertRow>(
        "SELECT id, gpu, kind, below, currency, region, created_at, last_fired_at
         FROM market_alerts ORDER BY id",
    )
    .fetch_all(conn)
    .await?)
}

/// Whether alert `id` was there to delete.
pub async fn delete_alert(conn: &mut SqliteConnection, id: i64) -> Result<bool, StoreError> {
    let done = sqlx::query("DELETE FROM market_alerts WHERE id = ?")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() > 0)
}

pub async fn mark_fired(
    conn: &mut SqliteConnection,
    id: i64,
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE market_alerts SET last_fired_at = ? WHERE id = ?")
        .bind(at)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}
