//! Rows of `settings`: one JSON text per key. `settings` decides the keys and reads the JSON;
//! these answer `sqlx::Error` so its failures keep their own code (`settings.query`).

use chrono::{DateTime, Utc};
use sqlx::SqliteConnection;

pub async fn value_of(
    conn: &mut SqliteConnection,
    key: &str,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar("SELECT value FROM settings WHERE key = ?")
        .bind(key)
        .fetch_optional(conn)
        .await
}

pub async fn put(
    conn: &mut SqliteConnection,
    key: &str,
    json: String,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
    )
    .bind(key)
    .bind(json)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn delete(conn: &mut SqliteConnection, key: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM settings WHERE key = ?")
        .bind(key)
        .execute(conn)
        .await?;
    Ok(())
}
