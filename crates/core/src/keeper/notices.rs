//! A hunt's success, told once: the tray, the desktop notice and the webhooks all take the
//! notices from [`take`], which marks each as told in the same step, so a restart or a second
//! caller never tells it again.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::billing::ledger;
use crate::store::keeper as repo;
use crate::store::Store;

use super::KeeperError;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct HuntNotice {
    pub instance: String,
    pub gpu_model: String,
    #[ts(type = "string")]
    pub price_per_hour: Decimal,
    pub currency: String,
    pub since: DateTime<Utc>,
    /// English, e.g. "your RTX 4090 is on — billing 2.28 CNY/h since 14:03 UTC".
    pub text: String,
}

/// The successful hunts not yet told, each marked told now.
pub async fn take(store: &Store, now: DateTime<Utc>) -> Result<Vec<HuntNotice>, KeeperError> {
    let mut conn = store.pool().acquire().await?;
    let hunts = repo::hunts(&mut conn).await?;
    drop(conn);
    let mut told = Vec::new();
    for (name, row) in hunts {
        let Some(since) = row
            .powered_on_at
            .filter(|_| row.state == "on" && row.told_at.is_none())
        else {
            continue;
        };
        // One instance whose ledger cannot be read is told without its price, never dropped.
        let summary = ledger::show(store, &name, now)
            .await
            .ok()
            .map(|d| d.summary);
        let mut conn = store.pool().acquire().await?;
        if !repo::mark_told(&mut conn, row.instance_id, now).await? {
            continue;
        }
        let (gpu_model, price, currency) = summary.map_or_else(
            || (String::new(), Decimal::ZERO, String::new()),
            |s| {
                (
                    s.gpu_model.clone(),
                    s.price_per_gpu_hour * Decimal::from(s.gpu_count),
                    s.currency.code().to_owned(),
                )
            },
        );
        let what = if gpu_model.is_empty() {
            name.clone()
        } else {
            gpu_model.clone()
        };
        told.push(HuntNotice {
            text: format!(
                "your {what} is on — billing {} {currency}/h since {} UTC",
                price.normalize(),
                since.format("%H:%M")
            ),
            instance: name,
            gpu_model,
            price_per_hour: price,
            currency,
            since,
        });
    }
    Ok(told)
}
