//! Team reminders' rows (migration 0180; closed ones: 0190): which team reminders fired here (the budgets
//! themselves are `store::team::team_budgets`). `crate::remind::team` decides; this only reads and writes.

use chrono::{DateTime, Utc};
use sqlx::SqliteConnection;

use crate::store::StoreError;

/// Whether this team reminder already fired here.
pub async fn fired(
    conn: &mut SqliteConnection,
    team: &str,
    kind: &str,
    occurrence: &str,
) -> Result<bool, StoreError> {
    row_exists(conn, team, kind, occurrence, "").await
}

/// Whether the row of one team reminder exists, with `also` (SQL) holding too.
async fn row_exists(
    conn: &mut SqliteConnection,
    team: &str,
    kind: &str,
    occurrence: &str,
    also: &'static str,
) -> Result<bool, StoreError> {
    let found: Option<i64> = sqlx::query_scalar(&format!(
        "SELECT 1 FROM team_reminders WHERE team = ? AND kind = ? AND occurrence = ?{also}"
    ))
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

/// Whether a fired team reminder is still open in the popup: fired here, not recorded silently
/// behind a more urgent one, not closed and not put off.
pub async fn is_open(
    conn: &mut SqliteConnection,
    team: &str,
    kind: &str,
    occurrence: &str,
) -> Result<bool, StoreError> {
    row_exists(
        conn,
        team,
        kind,
        occurrence,
        " AND silent = 0 AND dismissed_at IS NULL AND snoozed_until IS NULL",
    )
    .await
}

/// Put off a fired team reminder until `until`; false when it never fired here.
pub async fn snooze(
    conn: &mut SqliteConnection,
    team: &str,
    kind: &str,
    occurrence: &str,
    until: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE team_reminders SET snoozed_until = ?
         WHERE team = ? AND kind = ? AND occurrence = ? AND dismissed_at IS NULL",
    )
    .bind(until)
    .bind(team)
    .bind(kind)
    .bind(occurrence)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// End a team reminder's snooze that ran out by `now`; true when one did (it is sent once more).
pub async fn end_snooze(
    conn: &mut SqliteConnection,
    team: &str,
    kind: &str,
    occurrence: &str,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE team_reminders SET snoozed_until = NULL
         WHERE team = ? AND kind = ? AND occurrence = ? AND snoozed_until <= ?
           AND dismissed_at IS NULL",
    )
    .bind(team)
    .bind(kind)
    .bind(occurrence)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Close a fired team reminder; false when it never fired here.
pub async fn dismiss(
    conn: &mut SqliteConnection,
    team: &str,
    kind: &str,
    occurrence: &str,
    at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE team_reminders SET dismissed_at = ? WHERE team = ? AND kind = ? AND occurrence = ?",
    )
    .bind(at)
    .bind(team)
    .bind(kind)
    .bind(occurrence)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}
