//! Vast.ai interruptible rentals and hosts' price rises, through the instance's linked account:
//! whether it was outbid ([`look`]), raising the bid up to the cap the user set in the
//! instance's policy ([`bid`]), and a pending price increase seen ([`pending_increase`]) and
//! accepted or rejected ([`answer_increase`]). The calls are `account::vast_bid`'s.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::account::http::Api;
use crate::account::vast_bid::{self, BidState, PriceIncrease};
use crate::account::{client, Backoff, Endpoints, Provider};
use crate::stop::Resolved;
use crate::store::Store;

use super::KeeperError;

/// The linked Vast.ai account's API and the instance's id there.
async fn vast_api(
    store: &Store,
    name: &str,
    endpoints: &Endpoints,
    backoff: Backoff,
    now: DateTime<Utc>,
) -> Result<(Api, String), KeeperError> {
    let resolved = Resolved::resolve(store, name, now).await?;
    let link = resolved
        .link
        .as_ref()
        .filter(|link| link.account().provider == Provider::Vast)
        .ok_or_else(|| KeeperError::NotVast {
            name: name.to_owned(),
        })?;
    let api = client::api(Provider::Vast, endpoints, link.key()?, backoff)?;
    Ok((api, link.link.remote_id.clone()))
}

/// Whether `name` is interruptible and outbid now, as Vast.ai says.
pub async fn look(
    store: &Store,
    name: &str,
    endpoints: &Endpoints,
    backoff: Backoff,
    now: DateTime<Utc>,
) -> Result<BidState, KeeperError> {
    let (api, id) = vast_api(store, name, endpoints, backoff, now).await?;
    Ok(vast_bid::look(&api, &id).await?)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct BidReport {
    pub instance: String,
    /// The bid placed, per GPU-hour.
    #[ts(type = "string")]
    pub price: Decimal,
    /// Whether it was outbid before the change.
    pub was_outbid: bool,
}

/// Place a bid of `price` per GPU-hour on interruptible instance `name`, never above the cap
/// in its policy.
pub async fn bid(
    store: &Store,
    name: &str,
    price: Decimal,
    endpoints: &Endpoints,
    backoff: Backoff,
    now: DateTime<Utc>,
) -> Result<BidReport, KeeperError> {
    if price <= Decimal::ZERO || price > Decimal::from(1000) {
        return Err(KeeperError::InvalidInput(format!(
            "a bid of {price} per GPU-hour is not one Vast.ai takes"
        )));
    }
    let id = crate::billing::ledger::show(store, name, now)
        .await?
        .summary
        .id;
    let cap = super::list::policy_for(store, id).await?.bid_cap;
    if let Some(cap) = cap.filter(|cap| price > *cap) {
        return Err(KeeperError::AboveBidCap {
            name: name.to_owned(),
            price: price.to_string(),
            cap: cap.to_string(),
        });
    }
    let (api, remote_id) = vast_api(store, name, endpoints, backoff, now).await?;
    let state = vast_bid::look(&api, &remote_id).await?;
    if !state.interruptible {
        return Err(KeeperError::NotInterruptible {
            name: name.to_owned(),
        });
    }
    vast_bid::change_bid(&api, &remote_id, price).await?;
    Ok(BidReport {
        instance: name.to_owned(),
        price,
        was_outbid: state.outbid,
    })
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct IncreaseReport {
    pub instance: String,
    pub accepted: bool,
    pub increase: PriceIncrease,
}

/// The host's pending price increase on `name`, if there is one (nothing is answered).
pub async fn pending_increase(
    store: &Store,
    name: &str,
    endpoints: &Endpoints,
    backoff: Backoff,
    now: DateTime<Utc>,
) -> Result<Option<PriceIncrease>, KeeperError> {
    let (api, remote_id) = vast_api(store, name, endpoints, backoff, now).await?;
    Ok(vast_bid::pending_increases(&api)
        .await?
        .into_iter()
        .find(|i| i.instance_id == remote_id))
}

/// Accept or reject the host's pending price increase on `name`.
pub async fn answer_increase(
    store: &Store,
    name: &str,
    accept: bool,
    endpoints: &Endpoints,
    backoff: Backoff,
    now: DateTime<Utc>,
) -> Result<IncreaseReport, KeeperError> {
    let (api, remote_id) = vast_api(store, name, endpoints, backoff, now).await?;
    let increase = vast_bid::pending_increases(&api)
        .await?
        .into_iter()
        .find(|i| i.instance_id == remote_id)
        .ok_or_else(|| KeeperError::NoPriceIncrease {
            name: name.to_owned(),
        })?;
    vast_bid::answer_increase(&api, increase.pending_id, accept).await?;
    Ok(IncreaseReport {
        instance: name.to_owned(),
        accepted: accept,
        increase,
    })
}
