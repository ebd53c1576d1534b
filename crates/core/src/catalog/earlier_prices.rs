//! Prices the user already paid, read back from the rental ledger, so the Choose GPU step can
//! rank by cost without asking for prices the app has seen before.
//!
//! Only the user's own numbers are used (nothing here knows a provider's price list): for each
//! catalog GPU, the most recently effective price of any rental in the asked currency. Rentals
//! in other currencies are left out because the recommender compares prices in one currency.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use sqlx::SqliteConnection;
use ts_rs::TS;

use super::gpus::find_gpu;
use super::recommend::{PriceEntry, PriceOrigin};
use crate::store::ledger::{paid_prices, PaidPriceRow};
use crate::store::StoreError;

/// The last price paid for one GPU model, and the rental it comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct EarlierPrice {
    /// The GPU as the rental recorded it ("RTX 4090").
    pub gpu: String,
    /// The catalog entry it matches.
    pub gpu_id: String,
    /// Per card per hour.
    #[ts(type = "string")]
    pub price_per_hour: Decimal,
    pub currency: String,
    /// The rental's name.
    pub instance: String,
    /// When this price took effect.
    pub since: DateTime<Utc>,
}

impl EarlierPrice {
    /// As an entry of the recommender's price list.
    pub fn to_price_entry(&self) -> PriceEntry {
        PriceEntry {
            gpu: self.gpu.clone(),
            price_per_hour: self.price_per_hour,
            currency: self.currency.clone(),
            origin: PriceOrigin::EarlierRental,
        }
    }
}

/// The latest price paid per catalog GPU in `currency`, sorted by GPU id so the list is stable.
/// GPU names the catalog does not know are skipped (the recommender could not place them).
#[tracing::instrument(skip(conn), err)]
pub async fn earlier_prices(
    conn: &mut SqliteConnection,
    currency: &str,
) -> Result<Vec<EarlierPrice>, StoreError> {
    let rows = paid_prices(conn, currency.trim()).await?;
    latest_per_gpu(rows)
}

/// `rows` come most recent first; the first row seen for a GPU wins.
fn latest_per_gpu(rows: Vec<PaidPriceRow>) -> Result<Vec<EarlierPrice>, StoreError> {
    let mut prices: Vec<EarlierPrice> = Vec::new();
    for row in rows {
        let Some(gpu) = find_gpu(&row.gpu_model) else {
            continue;
        };
        if prices.iter().any(|p| p.gpu_id == gpu.id) {
            continue;
        }
        let price_per_hour =
            row.price_per_gpu_hour
                .parse::<Decimal>()
                .map_err(|_| StoreError::Corrupt {
                    what: "price_per_gpu_hour",
                    value: row.price_per_gpu_hour.clone(),
                })?;
        prices.push(EarlierPrice {
            gpu: row.gpu_model,
            gpu_id: gpu.id.clone(),
            price_per_hour,
            currency: row.currency,
            instance: row.instance,
            since: row.effective_from,
        });
    }
    prices.sort_by(|a, b| a.gpu_id.cmp(&b.gpu_id));
    Ok(prices)
}

#[cfg(test)]
#[path = "earlier_prices_tests.rs"]
mod tests;
