//! Rows of `price_acknowledgements` (migration 0355): the price per GPU-hour the renter said is
//! right for an instance, so its status stops flagging that price (and only that price).

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use sqlx::{Row, SqliteConnection};

use super::StoreError;

/// The acknowledged price and currency of `instance_id`, if any.
pub async fn of_instance(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Option<(Decimal, String)>, StoreError> {
    let row = sqlx::query(
        "SELECT price_per_gpu_hour, currency FROM price_acknowledgements WHERE instance_id = ?",
    )
    .bind(instance_id)
    .fetch_optional(conn)
    .await?;
    Ok(row.and_then(|row| {
        let price: String = row.get("price_per_gpu_hour");
        // A row this version cannot read acknowledges nothing: the flag shows again.
        price
            .parse::<Decimal>()
            .ok()
            .map(|p| (p, row.get("currency")))
    }))
}

/// Keep `price` in `currency` as acknowledged for `instance_id`.
pub async fn acknowledge(
    conn: &mut SqliteConnection,
    instance_id: i64,
    price: Decimal,
    currency: &str,
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO price_acknowledgements (instance_id, price_per_gpu_hour, currency, acknowledged_at)
         VALUES (?, ?, ?, ?)
         ON CONFLICT (instance_id) DO UPDATE SET
             price_per_gpu_hour = excluded.price_per_gpu_hour, currency = excluded.currency,
             acknowledged_at = excluded.acknowledged_at",
    )
    .bind(instance_id)
    .bind(price.normalize().to_string())
    .bind(currency)
    .bind(at)
    .execute(conn)
    .await?;
    Ok(())
}
