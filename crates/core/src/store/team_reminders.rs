//! Team budget reminders' rows (migration 0180): the team's budgets as last read from its server,
//! and which team reminders fired here. `crate::remind::team` decides; this only reads and writes.

use chrono::{DateTime, Utc};
use sqlx::SqliteConnection;

use super::StoreError;

/// Replace the budgets seen with `budgets` (`(currency, amount, set_by)`, amounts as text).
pub async fn set_budgets_seen(
    conn: &mut SqliteConnection,
    budgets: &[(String, String, String)],
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM team_budgets_seen")
        .execute(&mut *conn)
        .await?;
    for (currency, amount, set_by) in budgets {
        sqlx::query(
            "INSERT INTO team_budgets_seen (currency, amount, set_by, seen_at) VALUES (?, ?, ?, ?)",
        )
        .bind(currency)
        .bind(amount)
        .bind(set_by)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// The budgets seen last, `(currency, amount, set_by)`.
pub async fn budgets_seen(
    conn: &mut SqliteConnection,
) -> Result<Vec<(String, String, String)>, StoreError> {
    Ok(
        sqlx::query_as("SELECT currency, amount, set_by FROM team_budgets_seen ORDER BY currency")
            .fetch_all(conn)
            .await?,
    )
}

/// Whether this team reminder already fired here.
pub async fn fired(
    conn: &mut SqliteConnection,
    team: &str,
    kind: &str,
    occurrence: &str,
) -> Result<bool, StoreError> {
    let found: Option<i64> = sqlx::query_scalar(
        "SELECT 1 FROM team_reminders WHERE team = ? AND kind = ? AND occurrence = ?",
    )
    .bind(team)
    .bind(kind)
    .bind(occurrence)
    .fetch_optional(conn)
    .await?;
    Ok(found.is_some())
}

pub async fn record_fired(
    conn: &mut SqliteConnection,
    team: &str,
    kind: &str,
    occurrence: &str,
    due_at: DateTime<Utc>,
    fired_at: DateTime<Utc>,
    silent: bool,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO team_reminders (team, kind, occurrence, due_at, fired_at, silent)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (team, kind, occurrence) DO NOTHING",
    )
    .bind(team)
    .bind(kind)
    .bind(occurrence)
    .bind(due_at)
    .bind(fired_at)
    .bind(silent)
    .execute(conn)
    .await?;
    Ok(())
}
