//! Rows of `provider_accounts`, `account_instances` and `account_spend` (migration 0270): the
//! renter's provider accounts, which ledger instance is which of the provider's, and AutoDL's
//! running total. No key is ever stored here.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, SqliteConnection};

use super::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct AccountRow {
    pub id: i64,
    pub provider: String,
    pub label: String,
    pub key_env: Option<String>,
    pub added_at: DateTime<Utc>,
    pub last_sync_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub next_sync_after: Option<DateTime<Utc>>,
    pub failures: i64,
}

const ACCOUNT_COLUMNS: &str =
    "id, provider, label, key_env, added_at, last_sync_at, last_error, next_sync_after, failures";

pub async fn insert_account(
    conn: &mut SqliteConnection,
    provider: &str,
    label: &str,
    key_env: Option<&str>,
    added_at: DateTime<Utc>,
) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(
        "INSERT INTO provider_accounts (provider, label, key_env, added_at) VALUES (?, ?, ?, ?)
         RETURNING id",
    )
    .bind(provider)
    .bind(label)
    .bind(key_env)
    .bind(added_at)
    .fetch_one(conn)
    .await?)
}

pub async fn list_accounts(conn: &mut SqliteConnection) -> Result<Vec<AccountRow>, StoreError> {
    Ok(sqlx::query_as(&format!(
        "SELECT {ACCOUNT_COLUMNS} FROM provider_accounts ORDER BY provider, label"
    ))
    .fetch_all(conn)
    .await?)
}

pub async fn find_account(
    conn: &mut SqliteConnection,
    provider: &str,
    label: &str,
) -> Result<Option<AccountRow>, StoreError> {
    Ok(sqlx::query_as(&format!(
        "SELECT {ACCOUNT_COLUMNS} FROM provider_accounts WHERE provider = ? AND label = ?"
    ))
    .bind(provider)
    .bind(label)
    .fetch_optional(conn)
    .await?)
}

pub async fn account_by_id(
    conn: &mut SqliteConnection,
    id: i64,
) -> Result<Option<AccountRow>, StoreError> {
    Ok(sqlx::query_as(&format!(
        "SELECT {ACCOUNT_COLUMNS} FROM provider_accounts WHERE id = ?"
    ))
    .bind(id)
    .fetch_optional(conn)
    .await?)
}

pub async fn delete_account(conn: &mut SqliteConnection, id: i64) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM provider_accounts WHERE id = ?")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// A sync went through: clear the error and the back-off.
pub async fn mark_synced(
    conn: &mut SqliteConnection,
    id: i64,
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE provider_accounts SET last_sync_at = ?, last_error = NULL, next_sync_after = NULL,
             failures = 0 WHERE id = ?",
    )
    .bind(at)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// A sync failed: keep its words and when the next background try may run.
pub async fn mark_failed(
    conn: &mut SqliteConnection,
    id: i64,
    error: &str,
    next_sync_after: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE provider_accounts SET last_error = ?, next_sync_after = ?, failures = failures + 1
         WHERE id = ?",
    )
    .bind(error)
    .bind(next_sync_after)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct LinkRow {
    pub instance_id: i64,
    pub account_id: i64,
    pub remote_id: String,
    pub remote_state: String,
    pub seen_at: DateTime<Utc>,
    pub imported: bool,
    pub acknowledged: bool,
    pub note: Option<String>,
    /// The first sync that no longer saw it listed (migration 0310); `None` while listed.
    pub missing_since: Option<DateTime<Utc>>,
    /// A held price change (whole instance, per hour, decimal text), its GPU count, currency and
    /// the first sync that saw it; applied only by `account accept`.
    pub held_price_per_hour: Option<String>,
    pub held_gpu_count: Option<i64>,
    pub held_currency: Option<String>,
    pub held_since: Option<DateTime<Utc>>,
    /// The provider's own price per hour and currency when it differs in currency from the rules.
    pub provider_price_per_hour: Option<String>,
    pub provider_currency: Option<String>,
    /// Why the import needs a look, in plain words.
    pub import_warning: Option<String>,
    /// The ledger's name of the instance (joined).
    pub name: String,
}

const LINK_SELECT: &str = "SELECT l.instance_id, l.account_id, l.remote_id, l.remote_state,
        l.seen_at, l.imported, l.acknowledged, l.note, l.missing_since, l.held_price_per_hour,
        l.held_gpu_count, l.held_currency, l.held_since, l.provider_price_per_hour,
        l.provider_currency, l.import_warning, i.name
     FROM account_instances l JOIN instances i ON i.id = l.instance_id";

pub async fn links_of(
    conn: &mut SqliteConnection,
    account_id: i64,
) -> Result<Vec<LinkRow>, StoreError> {
    Ok(sqlx::query_as(&format!(
        "{LINK_SELECT} WHERE l.account_id = ? ORDER BY i.id"
    ))
    .bind(account_id)
    .fetch_all(conn)
    .await?)
}

pub async fn link_of_instance(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Option<LinkRow>, StoreError> {
    Ok(
        sqlx::query_as(&format!("{LINK_SELECT} WHERE l.instance_id = ?"))
            .bind(instance_id)
            .fetch_optional(conn)
            .await?,
    )
}

pub async fn all_links(conn: &mut SqliteConnection) -> Result<Vec<LinkRow>, StoreError> {
    Ok(sqlx::query_as(&format!("{LINK_SELECT} ORDER BY i.id"))
        .fetch_all(conn)
        .await?)
}

pub struct NewLink<'a> {
    pub instance_id: i64,
    pub account_id: i64,
    pub remote_id: &'a str,
    pub remote_state: &'a str,
    pub seen_at: DateTime<Utc>,
    pub imported: bool,
    pub note: Option<&'a str>,
}

pub async fn insert_link(
    conn: &mut SqliteConnection,
    link: &NewLink<'_>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO account_instances
             (instance_id, account_id, remote_id, remote_state, seen_at, imported, acknowledged, note)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(link.instance_id)
    .bind(link.account_id)
    .bind(link.remote_id)
    .bind(link.remote_state)
    .bind(link.seen_at)
    .bind(link.imported)
    .bind(!link.imported)
    .bind(link.note)
    .execute(conn)
    .await?;
    Ok(())
}

/// What the last sync saw of a linked instance.
pub async fn update_seen(
    conn: &mut SqliteConnection,
    instance_id: i64,
    remote_state: &str,
    seen_at: DateTime<Utc>,
    note: Option<&str>,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE account_instances SET remote_state = ?, seen_at = ?, note = COALESCE(?, note)
         WHERE instance_id = ?",
    )
    .bind(remote_state)
    .bind(seen_at)
    .bind(note)
    .bind(instance_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// What a sync keeps on a link beside the state (migration 0310); every column written, `None`
/// clearing it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkFacts {
    pub missing_since: Option<DateTime<Utc>>,
    pub held_price_per_hour: Option<String>,
    pub held_gpu_count: Option<i64>,
    pub held_currency: Option<String>,
    pub held_since: Option<DateTime<Utc>>,
    pub provider_price_per_hour: Option<String>,
    pub provider_currency: Option<String>,
}

pub async fn set_link_facts(
    conn: &mut SqliteConnection,
    instance_id: i64,
    facts: &LinkFacts,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE account_instances SET missing_since = ?, held_price_per_hour = ?,
             held_gpu_count = ?, held_currency = ?, held_since = ?, provider_price_per_hour = ?,
             provider_currency = ?
         WHERE instance_id = ?",
    )
    .bind(facts.missing_since)
    .bind(&facts.held_price_per_hour)
    .bind(facts.held_gpu_count)
    .bind(&facts.held_currency)
    .bind(facts.held_since)
    .bind(&facts.provider_price_per_hour)
    .bind(&facts.provider_currency)
    .bind(instance_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// The held price change was accepted (or is no longer held).
pub async fn clear_held(conn: &mut SqliteConnection, instance_id: i64) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE account_instances SET held_price_per_hour = NULL, held_gpu_count = NULL,
             held_currency = NULL, held_since = NULL
         WHERE instance_id = ?",
    )
    .bind(instance_id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn set_import_warning(
    conn: &mut SqliteConnection,
    instance_id: i64,
    words: &str,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE account_instances SET import_warning = ? WHERE instance_id = ?")
        .bind(words)
        .bind(instance_id)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn acknowledge(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<bool, StoreError> {
    let done = sqlx::query("UPDATE account_instances SET acknowledged = 1 WHERE instance_id = ?")
        .bind(instance_id)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() > 0)
}

pub async fn insert_spend(
    conn: &mut SqliteConnection,
    account_id: i64,
    at: DateTime<Utc>,
    total: &str,
    currency: &str,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO account_spend (account_id, at, total, currency) VALUES (?, ?, ?, ?)
         ON CONFLICT (account_id, at) DO UPDATE SET total = excluded.total",
    )
    .bind(account_id)
    .bind(at)
    .bind(total)
    .bind(currency)
    .execute(conn)
    .await?;
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct SpendRow {
    pub at: DateTime<Utc>,
    pub total: String,
    pub currency: String,
}

pub async fn spend_of(
    conn: &mut SqliteConnection,
    account_id: i64,
) -> Result<Vec<SpendRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT at, total, currency FROM account_spend WHERE account_id = ? ORDER BY at",
    )
    .bind(account_id)
    .fetch_all(conn)
    .await?)
}
