//! A provider price change the sync held back (3× or more away from the rules): the renter
//! accepts it here, and it becomes a rule change dated when the sync first saw it.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::sync::per_gpu_price;
use super::AccountError;
use crate::billing::events::{EventKind, LedgerEvent};
use crate::billing::{ledger, BillingRules};
use crate::store::accounts as repo;
use crate::store::Store;

/// What accepting a held price did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct AcceptReport {
    pub instance: String,
    /// The whole instance's price per hour before and after.
    #[ts(type = "string")]
    pub from: Decimal,
    #[ts(type = "string")]
    pub to: Decimal,
    pub currency: String,
    pub gpu_count: u32,
    /// When the sync first saw the new price.
    pub held_since: DateTime<Utc>,
    /// When the rule change takes effect: `held_since`, or the ledger's last event when one
    /// was recorded after it (the ledger keeps time order).
    pub applied_at: DateTime<Utc>,
}

/// Apply the price change held for `name` as a rule change from when it was first seen.
/// `NothingHeld` (bad input) when none is held.
pub async fn accept_held_price(
    store: &Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<AcceptReport, AccountError> {
    let detail = ledger::show(store, name, now).await?;
    let mut tx = store.write().await?;
    let instance = crate::store::ledger::find_instance(&mut tx, name)
        .await?
        .ok_or_else(|| AccountError::NothingHeld {
            name: name.to_owned(),
        })?;
    let link = repo::link_of_instance(&mut tx, instance.id).await?;
    let held = link.as_ref().and_then(|l| {
        Some((
            l.held_price_per_hour.as_deref()?.parse::<Decimal>().ok()?,
            u32::try_from(l.held_gpu_count?).ok()?,
            l.held_currency.clone()?,
            l.held_since?,
        ))
    });
    let Some((price, gpu_count, currency, held_since)) = held else {
        return Err(AccountError::NothingHeld {
            name: name.to_owned(),
        });
    };
    let rules = BillingRules {
        price_per_gpu_hour: per_gpu_price(price, gpu_count),
        gpu_count,
        ..detail.rules.clone()
    };
    rules.validate()?;
    let last = detail.events.last().map(|e| e.at);
    let applied_at = last.map_or(held_since, |l| l.max(held_since)).min(now);
    ledger::append_in(
        &mut tx,
        name,
        LedgerEvent::new(applied_at, EventKind::RuleChanged(Box::new(rules))),
    )
    .await?;
    repo::clear_held(&mut tx, instance.id).await?;
    tx.commit().await.map_err(crate::store::StoreError::from)?;
    Ok(AcceptReport {
        instance: name.to_owned(),
        from: (detail.rules.price_per_gpu_hour * Decimal::from(detail.rules.gpu_count.max(1)))
            .normalize(),
        to: price,
        currency,
        gpu_count,
        held_since,
        applied_at,
    })
}
