//! What [`decide`](super::decide) needs, read from the store: the ledger, the provider link, the
//! newest stop check, the monitor's latest minute, the newest watchdog look, the last backup.

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;
use sqlx::SqliteConnection;
use ts_rs::TS;

use super::decide::{decide, GpuLook, Known, GPU_LOOK_FRESH};
use super::{InstanceStatus, StatusError};
use rust_decimal::Decimal;

use crate::billing::ledger::{self, BrokenInstance, InstanceHistory};
use crate::billing::{BillingError, EventKind, InstanceSummary, ProviderKey};
use crate::catalog::recommend::prices_from_rentals;
use crate::price_check::{price_check, LiveBand, PriceCheckInput, PriceWarning};
use crate::store::probe_runs::RunOwner;
use crate::store::{
    accounts, backups, follow_ups, gpu_minutes, price_acks, probe_runs, ssh_targets, stop_checks,
    vast_looks, watchdog_looks, Store,
};

/// The status of `name` at `now`.
#[tracing::instrument(skip(store), err)]
pub async fn for_instance(
    store: &Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<InstanceStatus, StatusError> {
    let history = ledger::history_of(store, name).await?;
    let rentals = ledger::list(store, now).await?;
    // Before this function holds a connection: the market reads through the pool too.
    let live = live_prices(store, now).await;
    let mut conn = store.pool().acquire().await?;
    let row = crate::store::ledger::find_instance(&mut conn, name)
        .await?
        .ok_or_else(|| BillingError::UnknownInstance {
            name: name.to_owned(),
        })?;
    let checks = stop_checks::all(&mut conn).await?;
    let rental = Rental {
        provider: &row.provider,
        gpu_model: &row.gpu_model,
    };
    let others = Others {
        rentals: &rentals,
        checks: &checks,
        live: &live,
    };
    status_of(&mut conn, &history, rental, others, now).await
}

/// What the status of one instance reads from the others: the rentals (what was paid before),
/// the stop checks, and the market's live prices.
#[derive(Clone, Copy)]
struct Others<'a> {
    rentals: &'a [InstanceSummary],
    checks: &'a [stop_checks::StopCheckRow],
    live: &'a [LiveBand],
}

/// The market's live prices for the price flag; a market that cannot be read only means no
/// market band (the flag still checks the card and this user's history).
async fn live_prices(store: &Store, now: DateTime<Utc>) -> Vec<LiveBand> {
    crate::market::snapshot::live_prices(store, now)
        .await
        .unwrap_or_else(|err| {
            tracing::warn!(%err, "market prices left out of the price checks");
            Vec::new()
        })
}

/// What the ledger's instance row adds to its history: where it is rented and which card.
#[derive(Clone, Copy)]
struct Rental<'a> {
    provider: &'a str,
    gpu_model: &'a str,
}

/// The status of every instance whose ledger can be billed, oldest first.
#[tracing::instrument(skip(store), err)]
pub async fn all(store: &Store, now: DateTime<Utc>) -> Result<Vec<InstanceStatus>, StatusError> {
    let histories = ledger::histories(store).await?;
    let rentals = ledger::list(store, now).await?;
    // Before this function holds a connection: the market reads through the pool too.
    let live = live_prices(store, now).await;
    let mut conn = store.pool().acquire().await?;
    let rows: HashMap<i64, (String, String)> = crate::store::ledger::list_instances(&mut conn)
        .await?
        .into_iter()
        .map(|row| (row.id, (row.provider, row.gpu_model)))
        .collect();
    let checks = stop_checks::all(&mut conn).await?;
    let others = Others {
        rentals: &rentals,
        checks: &checks,
        live: &live,
    };
    let mut all = Vec::with_capacity(histories.len());
    for history in &histories {
        let rental = rows.get(&history.id).map_or(
            Rental {
                provider: "custom",
                gpu_model: "",
            },
            |(provider, gpu_model)| Rental {
                provider,
                gpu_model,
            },
        );
        match status_of(&mut conn, history, rental, others, now).await {
            Ok(status) => all.push(status),
            // One instance whose bill cannot be computed never hides the others.
            Err(StatusError::Billing(err)) if ledger::is_instance_fault(&err) => {
                tracing::warn!(instance = %history.name, %err, "left out of the statuses");
            }
            Err(err) => return Err(err),
        }
    }
    Ok(all)
}

async fn status_of(
    conn: &mut SqliteConnection,
    history: &InstanceHistory,
    rental: Rental<'_>,
    others: Others<'_>,
    now: DateTime<Utc>,
) -> Result<InstanceStatus, StatusError> {
    let link = accounts::link_of_instance(&mut *conn, history.id).await?;
    let watchdog = watchdog_looks::of_instance(&mut *conn, history.id).await?;
    let monitor = latest_minute(&mut *conn, history.id, now).await?;
    let last_backup = backups::for_instance(&mut *conn, history.id)
        .await?
        .into_iter()
        .map(|b| b.finished_at)
        .filter(|finished| *finished <= now)
        .max();
    let acknowledged = price_acks::of_instance(&mut *conn, history.id).await?;
    let vast = vast_looks::of_instance(&mut *conn, history.id).await?;
    let last_verified = probe_runs::list_probe_runs(&mut *conn, RunOwner::Instance(history.id), 1)
        .await?
        .first()
        .map(|run| run.collected_at);
    let has_target = ssh_targets::find(&mut *conn, history.id).await?.is_some();
    let follow_up = follow_ups::of_instance(&mut *conn, history.id).await?;
    let price_flag = price_flag(history, rental, others, acknowledged);
    let known = Known {
        history,
        provider: ProviderKey::parse(rental.provider).ok(),
        link: link.as_ref(),
        stop_check: others.checks.iter().find(|c| c.instance_id == history.id),
        monitor,
        watchdog: watchdog.as_ref(),
        last_backup,
        price_flag: price_flag.as_ref(),
        vast: vast.as_ref(),
        follow_up: follow_up.as_ref().map(|f| (f.reason.as_str(), f.asked_at)),
        last_verified,
        has_target,
    };
    Ok(decide(&known, now)?)
}

/// The first reason the rental's current price looks wrong, checked like New rental checks a
/// typed price (the card's own price, the budget, this user's other rentals of the card, the
/// market's live offers for it), or
/// `None` when it looks right or the renter said this very price is right.
fn price_flag(
    history: &InstanceHistory,
    rental: Rental<'_>,
    others: Others<'_>,
    acknowledged: Option<(Decimal, String)>,
) -> Option<PriceWarning> {
    let rentals = others.rentals;
    let rules = history.events.iter().rev().find_map(|e| match &e.kind {
        EventKind::Created(rules) | EventKind::RuleChanged(rules) => Some(rules.as_ref()),
        _ => None,
    })?;
    let currency = history.currency.code();
    if acknowledged.is_some_and(|(price, code)| {
        price == rules.price_per_gpu_hour && code.eq_ignore_ascii_case(currency)
    }) {
        return None;
    }
    // "What you paid before": only rentals created before this one.
    let created = rentals
        .iter()
        .find(|r| r.id == history.id)
        .map(|r| r.created_at);
    let earlier: Vec<InstanceSummary> = rentals
        .iter()
        .filter(|r| r.id != history.id && created.is_none_or(|c| r.created_at < c))
        .cloned()
        .collect();
    let input = PriceCheckInput {
        gpu_model: rental.gpu_model.to_owned(),
        price_per_gpu_hour: rules.price_per_gpu_hour,
        currency: currency.to_owned(),
        provider: None,
        card_price: None,
        gpu_count: Some(rules.gpu_count),
        planned_hours: history.planned_hours,
        budget: history.budget,
    };
    price_check(&input, &prices_from_rentals(&earlier), others.live)
        .warnings
        .into_iter()
        .find(|w| !matches!(w, PriceWarning::CurrencyDiffers { .. }))
}

/// The renter says the rental's current price is right: its flag goes, until the price changes.
pub async fn acknowledge_price(
    store: &Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<InstanceStatus, StatusError> {
    let history = ledger::history_of(store, name).await?;
    let rules = history
        .events
        .iter()
        .rev()
        .find_map(|e| match &e.kind {
            EventKind::Created(rules) | EventKind::RuleChanged(rules) => {
                Some(rules.as_ref().clone())
            }
            _ => None,
        })
        .ok_or_else(|| BillingError::UnknownInstance {
            name: name.to_owned(),
        })?;
    {
        let mut conn = store.pool().acquire().await?;
        price_acks::acknowledge(
            &mut conn,
            history.id,
            rules.price_per_gpu_hour,
            history.currency.code(),
            now,
        )
        .await?;
    }
    for_instance(store, name, now).await
}

/// The monitor's newest recorded minute within [`GPU_LOOK_FRESH`] of `now`.
async fn latest_minute(
    conn: &mut SqliteConnection,
    instance_id: i64,
    now: DateTime<Utc>,
) -> Result<Option<GpuLook>, StatusError> {
    let rows = gpu_minutes::between(
        conn,
        instance_id,
        now - GPU_LOOK_FRESH,
        now + Duration::minutes(1),
    )
    .await?;
    let Some(latest) = rows.iter().map(|r| r.minute).max() else {
        return Ok(None);
    };
    let minute: Vec<_> = rows.iter().filter(|r| r.minute == latest).collect();
    let busiest = minute
        .iter()
        .map(|r| r.utilization_avg)
        .filter(|u| u.is_finite())
        .fold(0.0_f64, f64::max);
    Ok(Some(GpuLook {
        at: latest,
        gpus: u32::try_from(minute.len()).unwrap_or(u32::MAX),
        busiest_percent: busiest.clamp(0.0, 100.0).ceil() as u32,
    }))
}

/// One rental of the list: the ledger's summary and its status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct ListedInstance {
    pub summary: InstanceSummary,
    pub status: InstanceStatus,
}

impl ListedInstance {
    /// A row of `instance list --json`: the summary's keys, its `state` the status's state.
    pub fn list_json(&self) -> serde_json::Value {
        super::summary_with_state(&self.summary, self.status.state)
    }
}

/// Every rental with its status, and those whose ledger cannot be billed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    pub instances: Vec<ListedInstance>,
    pub broken: Vec<BrokenInstance>,
}

/// `instance list` and the Rentals page: [`ledger::list_all`] with each instance's status.
#[tracing::instrument(skip(store), err)]
pub async fn listing(store: &Store, now: DateTime<Utc>) -> Result<Listing, StatusError> {
    let ledger = ledger::list_all(store, now).await?;
    let mut statuses: HashMap<String, InstanceStatus> = all(store, now)
        .await?
        .into_iter()
        .map(|s| (s.instance.clone(), s))
        .collect();
    let mut listing = Listing {
        instances: Vec::with_capacity(ledger.instances.len()),
        broken: ledger.broken,
    };
    for summary in ledger.instances {
        match statuses.remove(&summary.name) {
            Some(status) => listing.instances.push(ListedInstance { summary, status }),
            None => listing.broken.push(BrokenInstance {
                name: summary.name.clone(),
                code: "billing.amount_overflow".to_owned(),
                message: format!(
                    "{:?}: its status cannot be worked out; the other instances are not affected",
                    summary.name
                ),
            }),
        }
    }
    Ok(listing)
}

/// "Not now" to connecting and verifying an instance Leasehold brought up: the nudge goes.
pub async fn dismiss_follow_up(
    store: &Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<(), StatusError> {
    let id = ledger::show(store, name, now).await?.summary.id;
    let mut conn = store.pool().acquire().await?;
    follow_ups::delete(&mut conn, id).await?;
    Ok(())
}
