//! The one team this database is linked to (`team_link`: never the password), its pull cursors
//! and how far the server holds this laptop's events (`shared_through`, migration 0260).

use chrono::{DateTime, Utc};
use sqlx::{FromRow, SqliteConnection};

use crate::store::StoreError;

/// The one team this database is linked to.
#[derive(Debug, Clone, FromRow)]
pub struct LinkRow {
    pub url: String,
    pub member: String,
    pub team: String,
    pub team_id: i64,
    pub laptop_uid: String,
    pub pulled_seq: i64,
    /// The server sequence number of the last shared record pulled.
    pub pulled_record_seq: i64,
    pub connected_at: DateTime<Utc>,
    pub last_sync_at: Option<DateTime<Utc>>,
}

pub async fn link(conn: &mut SqliteConnection) -> Result<Option<LinkRow>, StoreError> {
    Ok(sqlx::query_as::<_, LinkRow>(
        "SELECT url, member, team, team_id, laptop_uid, pulled_seq, pulled_record_seq, connected_at,
             last_sync_at
         FROM team_link WHERE id = 1",
    )
    .fetch_optional(conn)
    .await?)
}

/// Link this database to a team (replacing any earlier link) and sign every row recorded before
/// with `member`: from now on they are this member's rows in the team's log. The new link's
/// `shared_through` starts at 0, so the old one must be settled first ([`settle_shared`]).
pub async fn set_link(conn: &mut SqliteConnection, row: &LinkRow) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM team_link")
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "INSERT INTO team_link (id, url, member, team, team_id, laptop_uid, pulled_seq,
             pulled_record_seq, connected_at, last_sync_at)
         VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&row.url)
    .bind(&row.member)
    .bind(&row.team)
    .bind(row.team_id)
    .bind(&row.laptop_uid)
    .bind(row.pulled_seq)
    .bind(row.pulled_record_seq)
    .bind(row.connected_at)
    .bind(row.last_sync_at)
    .execute(&mut *conn)
    .await?;
    for table in ["instances", "ledger_events"] {
        sqlx::query(&format!(
            "UPDATE {table} SET recorded_by = ? WHERE recorded_by IS NULL"
        ))
        .bind(&row.member)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

pub async fn delete_link(conn: &mut SqliteConnection) -> Result<(), StoreError> {
    settle_shared(&mut *conn).await?;
    sqlx::query("DELETE FROM team_link").execute(conn).await?;
    Ok(())
}

/// Move the pull cursors (events, shared records).
pub async fn set_pulled_seq(
    conn: &mut SqliteConnection,
    seq: i64,
    record_seq: i64,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE team_link SET pulled_seq = ?, pulled_record_seq = ? WHERE id = 1")
        .bind(seq)
        .bind(record_seq)
        .execute(conn)
        .await?;
    Ok(())
}

/// Move the pull cursor from `from` to `to`, only if it is at `from` now (a pull that ran
/// meanwhile has moved it itself).
pub async fn advance_pulled_seq(
    conn: &mut SqliteConnection,
    from: i64,
    to: i64,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE team_link SET pulled_seq = ? WHERE id = 1 AND pulled_seq = ?")
        .bind(to)
        .bind(from)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn set_last_sync(
    conn: &mut SqliteConnection,
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE team_link SET last_sync_at = ? WHERE id = 1")
        .bind(at)
        .execute(conn)
        .await?;
    Ok(())
}

/// The last local event id up to which the server holds every event (migration 0260), whatever
/// the rows' own `shared` flags say; 0 without a link.
pub(super) const SHARED_THROUGH: &str = "(SELECT coalesce(max(shared_through), 0) FROM team_link)";

/// Mark every pending event up to local id `last_id` as held by the server: the events of one
/// `pending_events` chunk (it takes them in id order, and new events get higher ids). One
/// number moves (`team_link.shared_through`, migration 0260); the rows are left as they are.
pub async fn mark_shared_through(
    conn: &mut SqliteConnection,
    last_id: i64,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE team_link SET shared_through = max(shared_through, ?)")
        .bind(last_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Write the link's `shared_through` into the events' own flags and set it back to 0: done
/// before the link changes, so the flags alone say what the server holds.
pub async fn settle_shared(conn: &mut SqliteConnection) -> Result<(), StoreError> {
    sqlx::query(&format!(
        "UPDATE ledger_events SET shared = 1 WHERE shared = 0 AND id <= {SHARED_THROUGH}"
    ))
    .execute(&mut *conn)
    .await?;
    sqlx::query("UPDATE team_link SET shared_through = 0")
        .execute(conn)
        .await?;
    Ok(())
}
