//! `account accept NAME`: apply the price change a sync held back (3× or more either way), from
//! the moment the sync first saw it, and forget it as held.
//!
//! Minimal (issue 35, written on the `status` branch for the instance page's held-price card):
//! the `sync-trust` branch brings the full version; the merge keeps one.

use chrono::{DateTime, Utc};

use super::AccountError;
use crate::billing::{ledger, BillingError, InstanceSummary};
use crate::store::Store;

/// Apply `name`'s held price change as a rule change dated when it was first seen (its GPU
/// count too, when the provider gave one), then clear what was held.
#[tracing::instrument(skip(store), err)]
pub async fn accept_held_price(
    store: &Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<InstanceSummary, AccountError> {
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    let row = crate::store::ledger::find_instance(&mut conn, name)
        .await?
        .ok_or_else(|| BillingError::UnknownInstance {
            name: name.to_owned(),
        })?;
    let link = crate::store::accounts::link_of_instance(&mut conn, row.id)
        .await?
        .ok_or_else(|| AccountError::NotLinked {
            name: name.to_owned(),
        })?;
    let nothing_held = || BillingError::InvalidInput {
        field: "held_price",
        reason: format!("no price change is held for {name:?}; nothing to accept"),
    };
    let held = link
        .held_price_per_hour
        .as_deref()
        .ok_or_else(nothing_held)?;
    let price = crate::billing::rules::parse_decimal("held_price", held)?;
    if let Some(currency) = link.held_currency.as_deref() {
        if !currency.eq_ignore_ascii_case(&row.currency) {
            return Err(BillingError::InvalidInput {
                field: "held_price",
                reason: format!(
                    "the held price is in {currency}, the rental in {}: change the rules by hand",
                    row.currency
                ),
            }
            .into());
        }
    }
    // The ledger takes its own connections: this one goes back first (a pool of one would wait
    // for it forever).
    drop(conn);
    let at = link.held_since.unwrap_or(now).min(now);
    let mut rules = ledger::show(store, name, at).await?.rules;
    if let Some(gpus) = link.held_gpu_count.and_then(|g| u32::try_from(g).ok()) {
        rules.gpu_count = gpus.max(1);
    }
    rules.price_per_gpu_hour = super::sync::per_gpu_price(price, rules.gpu_count);
    let summary = ledger::change_rules(store, name, &rules, at).await?;
    // The link's held columns belong to `store::accounts`; written here until the sync-trust
    // branch's repository function replaces this.
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    sqlx::query(
        "UPDATE account_instances SET held_price_per_hour = NULL, held_gpu_count = NULL,
             held_currency = NULL, held_since = NULL WHERE instance_id = ?",
    )
    .bind(row.id)
    .execute(&mut *conn)
    .await
    .map_err(crate::store::StoreError::from)?;
    Ok(summary)
}
