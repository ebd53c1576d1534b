//! Vast.ai interruptible rentals and hosts' price rises, through the instance's linked account:
//! whether it was outbid ([`look`]), raising the bid up to the cap the user set in the
//! instance's policy ([`bid`]), and a pending price increase seen ([`pending_increase`]) and
//! accepted or rejected ([`answer_increase`]). The calls are `account::vast_bid`'s.
//!
//! Each look is kept (`store::vast_looks`), so status shows an outbid instance as its own
//! state and reminders tell an outbid and a price rise; [`watch`] looks at every Vast.ai rental
//! in one round (the app's background loop, `leasehold keeper look-vast`), because Vast.ai's own
//! notices only reach a public HTTPS address, which a laptop is not.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::account::http::Api;
use crate::account::vast_bid::{self, BidState, PriceIncrease};
use crate::account::{client, Backoff, Endpoints, Provider};
use crate::billing::InstanceState;
use crate::stop::Resolved;
use crate::store::{accounts, vast_looks, Store};

use super::KeeperError;

/// The linked Vast.ai account's API, the instance's id there and in the ledger.
struct VastRental {
    api: Api,
    remote_id: String,
    instance_id: i64,
}

async fn vast_api(
    store: &Store,
    name: &str,
    endpoints: &Endpoints,
    backoff: Backoff,
    now: DateTime<Utc>,
) -> Result<VastRental, KeeperError> {
    let resolved = Resolved::resolve(store, name, now).await?;
    let link = resolved
        .link
        .as_ref()
        .filter(|link| link.account().provider == Provider::Vast)
        .ok_or_else(|| KeeperError::NotVast {
            name: name.to_owned(),
        })?;
    let api = client::api(Provider::Vast, endpoints, link.key()?, backoff)?;
    Ok(VastRental {
        api,
        remote_id: link.link.remote_id.clone(),
        instance_id: resolved.instance_id,
    })
}

/// Whether `name` is interruptible and outbid now, as Vast.ai says (kept for status and
/// reminders).
pub async fn look(
    store: &Store,
    name: &str,
    endpoints: &Endpoints,
    backoff: Backoff,
    now: DateTime<Utc>,
) -> Result<BidState, KeeperError> {
    let rental = vast_api(store, name, endpoints, backoff, now).await?;
    let state = vast_bid::look(&rental.api, &rental.remote_id).await?;
    let seen = vast_looks::BidLook {
        interruptible: state.interruptible,
        outbid: state.outbid,
        per_hour: state.per_hour,
        min_bid: state.min_bid,
    };
    let mut conn = store.pool().acquire().await?;
    vast_looks::put_bid(&mut conn, rental.instance_id, &seen, now).await?;
    Ok(state)
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
    let rental = vast_api(store, name, endpoints, backoff, now).await?;
    let state = vast_bid::look(&rental.api, &rental.remote_id).await?;
    if !state.interruptible {
        return Err(KeeperError::NotInterruptible {
            name: name.to_owned(),
        });
    }
    vast_bid::change_bid(&rental.api, &rental.remote_id, price).await?;
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

/// The host's pending price increase on `name`, if there is one (nothing is answered; what was
/// seen is kept for status and reminders).
pub async fn pending_increase(
    store: &Store,
    name: &str,
    endpoints: &Endpoints,
    backoff: Backoff,
    now: DateTime<Utc>,
) -> Result<Option<PriceIncrease>, KeeperError> {
    let rental = vast_api(store, name, endpoints, backoff, now).await?;
    let increase = vast_bid::pending_increases(&rental.api)
        .await?
        .into_iter()
        .find(|i| i.instance_id == rental.remote_id);
    keep_increase(store, rental.instance_id, increase.as_ref(), now).await?;
    Ok(increase)
}

async fn keep_increase(
    store: &Store,
    instance_id: i64,
    increase: Option<&PriceIncrease>,
    now: DateTime<Utc>,
) -> Result<(), KeeperError> {
    let mut conn = store.pool().acquire().await?;
    let seen = increase.map(|i| (i.pending_id, i.old_per_hour, i.new_per_hour));
    vast_looks::put_increase(&mut conn, instance_id, seen, now).await?;
    Ok(())
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
    let rental = vast_api(store, name, endpoints, backoff, now).await?;
    let increase = vast_bid::pending_increases(&rental.api)
        .await?
        .into_iter()
        .find(|i| i.instance_id == rental.remote_id)
        .ok_or_else(|| KeeperError::NoPriceIncrease {
            name: name.to_owned(),
        })?;
    vast_bid::answer_increase(&rental.api, increase.pending_id, accept).await?;
    keep_increase(store, rental.instance_id, None, now).await?;
    Ok(IncreaseReport {
        instance: name.to_owned(),
        accepted: accept,
        increase,
    })
}

/// One round of looks at every Vast.ai rental not released: who was looked at, and each
/// instance a look failed for with the error's code (one failure never stops the others).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct VastWatch {
    pub looked: Vec<String>,
    pub outbid: Vec<String>,
    pub price_increases: Vec<String>,
    pub failed: Vec<VastWatchFailure>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct VastWatchFailure {
    pub instance: String,
    pub code: String,
    pub message: String,
}

/// Look at every rental linked to a Vast.ai account and not released: its bid and a host's
/// pending price increase, each kept.
pub async fn watch(
    store: &Store,
    endpoints: &Endpoints,
    backoff: Backoff,
    now: DateTime<Utc>,
) -> Result<VastWatch, KeeperError> {
    let names = vast_rentals(store, now).await?;
    let mut round = VastWatch::default();
    for name in names {
        let looked = async {
            let state = look(store, &name, endpoints, backoff, now).await?;
            let increase = pending_increase(store, &name, endpoints, backoff, now).await?;
            Ok::<_, KeeperError>((state, increase))
        }
        .await;
        match looked {
            Ok((state, increase)) => {
                if state.outbid {
                    round.outbid.push(name.clone());
                }
                if increase.is_some() {
                    round.price_increases.push(name.clone());
                }
                round.looked.push(name);
            }
            Err(err) => {
                tracing::warn!(instance = name, %err, "Vast.ai could not be asked");
                round.failed.push(VastWatchFailure {
                    instance: name,
                    code: crate::Coded::code(&err).to_owned(),
                    message: err.to_string(),
                });
            }
        }
    }
    Ok(round)
}

/// The names of the rentals linked to a Vast.ai account that the ledger has not released and
/// the last sync did not find gone.
async fn vast_rentals(store: &Store, now: DateTime<Utc>) -> Result<Vec<String>, KeeperError> {
    let live: std::collections::HashMap<i64, String> = crate::billing::ledger::list(store, now)
        .await?
        .into_iter()
        .filter(|s| {
            s.state
                .is_some_and(|state| state != InstanceState::Released)
        })
        .map(|s| (s.id, s.name))
        .collect();
    let mut conn = store.pool().acquire().await?;
    let vast: std::collections::HashSet<i64> = accounts::list_accounts(&mut conn)
        .await?
        .into_iter()
        .filter(|a| a.provider == Provider::Vast.as_str())
        .map(|a| a.id)
        .collect();
    let mut names: Vec<String> = accounts::all_links(&mut conn)
        .await?
        .into_iter()
        .filter(|l| vast.contains(&l.account_id))
        .filter(|l| !matches!(l.remote_state.as_str(), "gone" | "missing"))
        .filter_map(|l| live.get(&l.instance_id).cloned())
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}
