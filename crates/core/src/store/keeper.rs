//! Rows of `keeper_hunts` (one power-on hunt per instance) and `keeper_policies` (each
//! instance's two-stage policy). Amounts stay decimal text here; `keeper` reads them.

use chrono::{DateTime, Utc};
use sqlx::SqliteConnection;

use super::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct HuntRow {
    pub instance_id: i64,
    pub started_at: DateTime<Utc>,
    pub deadline: DateTime<Utc>,
    pub every_min_s: i64,
    pub every_max_s: i64,
    pub max_spend: Option<String>,
    pub spent_at_start: String,
    pub tries: i64,
    pub next_try_at: DateTime<Utc>,
    pub last_answer: String,
    pub state: String,
    pub gave_up: Option<String>,
    pub powered_on_at: Option<DateTime<Utc>>,
    pub told_at: Option<DateTime<Utc>>,
}

const HUNT_COLUMNS: &str = "instance_id, started_at, deadline, every_min_s, every_max_s, \
     max_spend, spent_at_start, tries, next_try_at, last_answer, state, gave_up, powered_on_at, \
     told_at";

/// Keep `row` as the instance's hunt, replacing an earlier one.
pub async fn put_hunt(conn: &mut SqliteConnection, row: &HuntRow) -> Result<(), StoreError> {
    sqlx::query(&format!(
        "INSERT OR REPLACE INTO keeper_hunts ({HUNT_COLUMNS})
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ))
    .bind(row.instance_id)
    .bind(row.started_at)
    .bind(row.deadline)
    .bind(row.every_min_s)
    .bind(row.every_max_s)
    .bind(&row.max_spend)
    .bind(&row.spent_at_start)
    .bind(row.tries)
    .bind(row.next_try_at)
    .bind(&row.last_answer)
    .bind(&row.state)
    .bind(&row.gave_up)
    .bind(row.powered_on_at)
    .bind(row.told_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn hunt(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Option<HuntRow>, StoreError> {
    Ok(sqlx::query_as::<_, HuntRow>(&format!(
        "SELECT {HUNT_COLUMNS} FROM keeper_hunts WHERE instance_id = ?"
    ))
    .bind(instance_id)
    .fetch_optional(conn)
    .await?)
}

/// Every hunt, with its instance's name.
pub async fn hunts(conn: &mut SqliteConnection) -> Result<Vec<(String, HuntRow)>, StoreError> {
    #[derive(sqlx::FromRow)]
    struct Named {
        name: String,
        #[sqlx(flatten)]
        row: HuntRow,
    }
    let rows = sqlx::query_as::<_, Named>(
        "SELECT i.name, h.instance_id, h.started_at, h.deadline, h.every_min_s, h.every_max_s,
                h.max_spend, h.spent_at_start, h.tries, h.next_try_at, h.last_answer, h.state,
                h.gave_up, h.powered_on_at, h.told_at
         FROM keeper_hunts h JOIN instances i ON i.id = h.instance_id ORDER BY i.name",
    )
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(|n| (n.name, n.row)).collect())
}

/// Stop a hunt still under way; `false` when there was none.
pub async fn stop_hunt(conn: &mut SqliteConnection, instance_id: i64) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE keeper_hunts SET state = 'stopped' WHERE instance_id = ? AND state = 'hunting'",
    )
    .bind(instance_id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Mark a successful hunt as told; `false` when it was told already (or is no success).
pub async fn mark_told(
    conn: &mut SqliteConnection,
    instance_id: i64,
    at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE keeper_hunts SET told_at = ?
         WHERE instance_id = ? AND state = 'on' AND told_at IS NULL",
    )
    .bind(at)
    .bind(instance_id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PolicyRow {
    pub instance_id: i64,
    pub stop_after_idle_s: Option<i64>,
    pub release_after_stopped_s: Option<i64>,
    pub auto_release: bool,
    pub off: bool,
    pub bid_cap: Option<String>,
}

pub async fn put_policy(conn: &mut SqliteConnection, row: &PolicyRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT OR REPLACE INTO keeper_policies
             (instance_id, stop_after_idle_s, release_after_stopped_s, auto_release, off, bid_cap)
         VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(row.instance_id)
    .bind(row.stop_after_idle_s)
    .bind(row.release_after_stopped_s)
    .bind(row.auto_release)
    .bind(row.off)
    .bind(&row.bid_cap)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn policies(conn: &mut SqliteConnection) -> Result<Vec<PolicyRow>, StoreError> {
    Ok(sqlx::query_as::<_, PolicyRow>(
        "SELECT instance_id, stop_after_idle_s, release_after_stopped_s, auto_release, off, bid_cap
         FROM keeper_policies",
    )
    .fetch_all(conn)
    .await?)
}

/// The settings key the default policy (JSON) is kept under.
const DEFAULT_POLICY_KEY: &str = "keeper.default_policy";

pub async fn default_policy(conn: &mut SqliteConnection) -> Result<Option<String>, StoreError> {
    Ok(
        sqlx::query_scalar::<_, String>("SELECT value FROM settings WHERE key = ?")
            .bind(DEFAULT_POLICY_KEY)
            .fetch_optional(conn)
            .await?,
    )
}

pub async fn put_default_policy(
    conn: &mut SqliteConnection,
    json: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query("INSERT OR REPLACE INTO settings (key, value, updated_at) VALUES (?, ?, ?)")
        .bind(DEFAULT_POLICY_KEY)
        .bind(json)
        .bind(now)
        .execute(conn)
        .await?;
    Ok(())
}
