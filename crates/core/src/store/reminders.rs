//! Rows of `reminders` (what fired, snoozes, dismissals), `reminder_rules` and `webhooks`.
//! `crate::remind` and `crate::webhook` turn them into domain values.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, SqliteConnection};

use super::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct ReminderRow {
    pub instance_id: i64,
    pub kind: String,
    pub occurrence: String,
    pub due_at: DateTime<Utc>,
    pub fired_at: DateTime<Utc>,
    pub silent: bool,
    pub snoozed_until: Option<DateTime<Utc>>,
    pub dismissed_at: Option<DateTime<Utc>>,
}

pub async fn find(
    conn: &mut SqliteConnection,
    instance_id: i64,
    kind: &str,
    occurrence: &str,
) -> Result<Option<ReminderRow>, StoreError> {
    Ok(sqlx::query_as::<_, ReminderRow>(
        "SELECT instance_id, kind, occurrence, due_at, fired_at, silent, snoozed_until, dismissed_at
         FROM reminders WHERE instance_id = ? AND kind = ? AND occurrence = ?",
    )
    .bind(instance_id)
    .bind(kind)
    .bind(occurrence)
    .fetch_optional(conn)
    .await?)
}

/// Record that an occurrence fired at `fired_at` (again, after a snooze ran out): any snooze is
/// cleared, a dismissal is kept.
pub async fn record_fired(
    conn: &mut SqliteConnection,
    row: &ReminderRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO reminders (instance_id, kind, occurrence, due_at, fired_at, silent)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (instance_id, kind, occurrence)
         DO UPDATE SET fired_at = excluded.fired_at, silent = excluded.silent, snoozed_until = NULL",
    )
    .bind(row.instance_id)
    .bind(&row.kind)
    .bind(&row.occurrence)
    .bind(row.due_at)
    .bind(row.fired_at)
    .bind(row.silent)
    .execute(conn)
    .await?;
    Ok(())
}

/// Set the snooze of a fired occurrence; false when no such occurrence has fired.
pub async fn snooze(
    conn: &mut SqliteConnection,
    instance_id: i64,
    kind: &str,
    occurrence: &str,
    until: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE reminders SET snoozed_until = ? WHERE instance_id = ? AND kind = ? AND occurrence = ?",
    )
    .bind(until)
    .bind(instance_id)
    .bind(kind)
    .bind(occurrence)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Mark a fired occurrence as dealt with; false when no such occurrence has fired.
pub async fn dismiss(
    conn: &mut SqliteConnection,
    instance_id: i64,
    kind: &str,
    occurrence: &str,
    at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE reminders SET dismissed_at = ? WHERE instance_id = ? AND kind = ? AND occurrence = ?",
    )
    .bind(at)
    .bind(instance_id)
    .bind(kind)
    .bind(occurrence)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

pub async fn load_rules(conn: &mut SqliteConnection) -> Result<Option<String>, StoreError> {
    Ok(
        sqlx::query_scalar::<_, String>("SELECT rules FROM reminder_rules WHERE id = 1")
            .fetch_optional(conn)
            .await?,
    )
}

pub async fn save_rules(
    conn: &mut SqliteConnection,
    rules: &str,
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO reminder_rules (id, rules, updated_at) VALUES (1, ?, ?)
         ON CONFLICT (id) DO UPDATE SET rules = excluded.rules, updated_at = excluded.updated_at",
    )
    .bind(rules)
    .bind(at)
    .execute(conn)
    .await?;
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct WebhookRow {
    pub id: i64,
    pub kind: String,
    pub label: String,
    pub has_secret: bool,
    pub created_at: DateTime<Utc>,
}

pub async fn insert_webhook(
    conn: &mut SqliteConnection,
    kind: &str,
    label: &str,
    has_secret: bool,
    at: DateTime<Utc>,
) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar::<_, i64>(
        "INSERT INTO webhooks (kind, label, has_secret, created_at) VALUES (?, ?, ?, ?) RETURNING id",
    )
    .bind(kind)
    .bind(label)
    .bind(has_secret)
    .bind(at)
    .fetch_one(conn)
    .await?)
}

pub async fn list_webhooks(conn: &mut SqliteConnection) -> Result<Vec<WebhookRow>, StoreError> {
    Ok(sqlx::query_as::<_, WebhookRow>(
        "SELECT id, kind, label, has_secret, created_at FROM webhooks ORDER BY id",
    )
    .fetch_all(conn)
    .await?)
}

pub async fn delete_webhook(conn: &mut SqliteConnection, id: i64) -> Result<bool, StoreError> {
    let done = sqlx::query("DELETE FROM webhooks WHERE id = ?")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() > 0)
}
