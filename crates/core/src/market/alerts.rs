//! Market alerts: "RTX 4090 under $0.35/h", "H100 back in stock (in a region)", "a 4090 cheaper
//! than the one I am paying for". Each refresh checks them against the kept offers and the
//! rentals billing now (pure [`hits`]); a hit is told through the saved webhooks (and the app's
//! reminders) at most once per alert per hour.

use chrono::{DateTime, Duration, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::filter::{cheapest_first, cheapest_in_any_currency, same_gpu};
use super::offer::Offer;
use super::MarketError;
use crate::store::market::{self as market_rows, AlertRow};
use crate::store::{Store, StoreError};
use crate::webhook::WebhookMessage;

/// The quietest an alert stays after it fired.
pub const AT_MOST_EVERY: Duration = Duration::hours(1);
/// "Cheaper than mine" holds for an offer at least this much under what a rental costs: a few
/// cents' difference is not worth moving the work for.
pub const CHEAPER_BY_PERCENT: u32 = 10;

/// What an alert waits for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export)]
pub enum AlertRule {
    /// An offer of the GPU below `below` per GPU-hour in `currency`.
    Below {
        #[ts(type = "string")]
        below: Decimal,
        currency: String,
    },
    /// An offer of the GPU in stock (in a region whose name contains `region`, when given).
    InStock { region: Option<String> },
    /// An offer of the GPU in stock at least [`CHEAPER_BY_PERCENT`] % under what a rental of it
    /// billing now costs per GPU-hour (converted at the dated rate when the currencies differ).
    CheaperThanMine,
}

/// A rental billing now, as "cheaper than mine" compares it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Paying {
    pub instance: String,
    /// The GPU as the catalog names it.
    pub gpu: String,
    #[ts(type = "string")]
    pub price_per_gpu_hour: Decimal,
    pub currency: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Alert {
    #[ts(type = "number")]
    pub id: i64,
    pub gpu: String,
    pub rule: AlertRule,
    pub created_at: DateTime<Utc>,
    pub last_fired_at: Option<DateTime<Utc>>,
}

/// An alert that holds now, with the best offer that makes it hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct AlertHit {
    pub alert: Alert,
    pub offer: Offer,
    /// For "cheaper than mine": the rental the offer undercuts.
    pub mine: Option<Paying>,
}

impl AlertHit {
    pub fn message(&self) -> WebhookMessage {
        let o = &self.offer;
        let mut fields = serde_json::Map::new();
        fields.insert("kind".into(), "market_alert".into());
        fields.insert("alert_id".into(), self.alert.id.into());
        fields.insert("provider".into(), o.provider.as_str().into());
        fields.insert("offer_id".into(), o.offer_id.clone().into());
        fields.insert("gpu".into(), o.gpu.clone().into());
        fields.insert(
            "price_per_gpu_hour".into(),
            o.price_per_gpu_hour.to_string().into(),
        );
        fields.insert("currency".into(), o.currency.clone().into());
        let place = o
            .region
            .as_deref()
            .map(|r| format!(" in {r}"))
            .unwrap_or_default();
        let versus = self
            .mine
            .as_ref()
            .map(|m| {
                format!(
                    " Cheaper than the {} {}/GPU-hour you pay for {}.",
                    m.price_per_gpu_hour.normalize(),
                    m.currency,
                    m.instance
                )
            })
            .unwrap_or_default();
        WebhookMessage {
            title: format!("Leasehold: {} offer on {}", o.gpu, o.provider.display()),
            text: format!(
                "{}× {} on {}{place} at {} {}/GPU-hour ({} {}/h), stock {}; offer {}.{versus}",
                o.count,
                o.gpu,
                o.provider.display(),
                o.price_per_gpu_hour,
                o.currency,
                o.price_per_hour,
                o.currency,
                o.stock.as_str(),
                o.offer_id
            ),
            fields,
        }
    }
}

fn check_gpu(gpu: &str) -> Result<String, MarketError> {
    let gpu = crate::account::remote::clean_text(gpu, 60);
    if gpu.is_empty() {
        return Err(MarketError::InvalidInput("--gpu names no GPU".into()));
    }
    Ok(crate::catalog::find_gpu(&gpu).map_or(gpu, |spec| spec.name.clone()))
}

/// Add an alert; returns it.
pub async fn add(
    store: &Store,
    gpu: &str,
    rule: AlertRule,
    now: DateTime<Utc>,
) -> Result<Alert, MarketError> {
    let gpu = check_gpu(gpu)?;
    let (kind, below, currency, region) = match &rule {
        AlertRule::Below { below, currency } => {
            if *below <= Decimal::ZERO {
                return Err(MarketError::InvalidInput(
                    "--below must be a price more than zero".into(),
                ));
            }
            let currency = crate::billing::Currency::parse(currency)?;
            (
                "below",
                Some(below.normalize().to_string()),
                Some(currency.code().to_owned()),
                None,
            )
        }
        AlertRule::InStock { region } => {
            let region = region
                .as_deref()
                .map(|r| crate::account::remote::clean_text(r, 40))
                .filter(|r| !r.is_empty());
            ("in_stock", None, None, region)
        }
        AlertRule::CheaperThanMine => ("cheaper_than_mine", None, None, None),
    };
    let row = AlertRow {
        id: 0,
        gpu,
        kind: kind.to_owned(),
        below,
        currency,
        region,
        created_at: now,
        last_fired_at: None,
    };
    let id = market_rows::insert_alert(&mut *acquire(store).await?, &row).await?;
    list(store)
        .await?
        .into_iter()
        .find(|a| a.id == id)
        .ok_or(MarketError::UnknownAlert(id))
}

pub async fn list(store: &Store) -> Result<Vec<Alert>, MarketError> {
    let rows = market_rows::alerts(&mut *acquire(store).await?).await?;
    let mut out = Vec::new();
    for row in rows {
        let rule = match row.kind.as_str() {
            "below" => {
                let Some(below) = row.below.as_deref().and_then(|b| b.parse().ok()) else {
                    continue;
                };
                AlertRule::Below {
                    below,
                    currency: row.currency.unwrap_or_else(|| "USD".into()),
                }
            }
            "in_stock" => AlertRule::InStock { region: row.region },
            "cheaper_than_mine" => AlertRule::CheaperThanMine,
            _ => continue,
        };
        out.push(Alert {
            id: row.id,
            gpu: row.gpu,
            rule,
            created_at: row.created_at,
            last_fired_at: row.last_fired_at,
        });
    }
    Ok(out)
}

pub async fn remove(store: &Store, id: i64) -> Result<(), MarketError> {
    if !market_rows::delete_alert(&mut *acquire(store).await?, id).await? {
        return Err(MarketError::UnknownAlert(id));
    }
    Ok(())
}

async fn acquire(store: &Store) -> Result<sqlx::pool::PoolConnection<sqlx::Sqlite>, StoreError> {
    Ok(store.pool().acquire().await?)
}

/// The alerts that hold for `offers` (and, for "cheaper than mine", the rentals `paying` now)
/// and have not fired within the last hour, each with its best offer (cheapest first).
pub fn hits(
    alerts: &[Alert],
    offers: &[Offer],
    paying: &[Paying],
    now: DateTime<Utc>,
) -> Vec<AlertHit> {
    alerts
        .iter()
        .filter(|a| a.last_fired_at.is_none_or(|t| now - t >= AT_MOST_EVERY))
        .filter_map(|alert| {
            if alert.rule == AlertRule::CheaperThanMine {
                return cheaper_than_mine(alert, offers, paying);
            }
            offers
                .iter()
                .filter(|o| same_gpu(&alert.gpu, o) && o.stock.in_stock())
                .filter(|o| match &alert.rule {
                    AlertRule::Below { below, currency } => {
                        o.currency.eq_ignore_ascii_case(currency) && o.price_per_gpu_hour < *below
                    }
                    AlertRule::InStock { region } => {
                        o.stock != super::Stock::Unknown
                            && region.as_deref().is_none_or(|r| {
                                o.region
                                    .as_deref()
                                    .is_some_and(|or| or.to_lowercase().contains(&r.to_lowercase()))
                            })
                    }
                    AlertRule::CheaperThanMine => false,
                })
                .min_by(|a, b| cheapest_in_any_currency(a, b))
                .map(|offer| AlertHit {
                    alert: alert.clone(),
                    offer: offer.clone(),
                    mine: None,
                })
        })
        .collect()
}

/// The cheapest in-stock offer of the alert's GPU that undercuts a rental of it by at least
/// [`CHEAPER_BY_PERCENT`] %, against the dearest such rental (the biggest saving).
fn cheaper_than_mine(alert: &Alert, offers: &[Offer], paying: &[Paying]) -> Option<AlertHit> {
    let mut mine: Vec<&Paying> = paying.iter().filter(|p| p.gpu == alert.gpu).collect();
    mine.sort_by_key(|p| std::cmp::Reverse(p.price_per_gpu_hour));
    let keep = Decimal::from(100 - CHEAPER_BY_PERCENT) / Decimal::from(100);
    mine.into_iter().find_map(|rental| {
        let threshold = rental.price_per_gpu_hour * keep;
        offers
            .iter()
            .filter(|o| same_gpu(&alert.gpu, o) && o.stock.in_stock())
            .filter_map(|o| in_currency(o, &rental.currency).map(|price| (o, price)))
            .filter(|(_, price)| *price <= threshold)
            .min_by(|(a, pa), (b, pb)| pa.cmp(pb).then_with(|| cheapest_first(a, b)))
            .map(|(offer, _)| AlertHit {
                alert: alert.clone(),
                offer: offer.clone(),
                mine: Some(rental.clone()),
            })
    })
}

/// The offer's price per GPU-hour in `currency`, at the dated table's rate when they differ.
fn in_currency(offer: &Offer, currency: &str) -> Option<Decimal> {
    if offer.currency.eq_ignore_ascii_case(currency) {
        return Some(offer.price_per_gpu_hour);
    }
    crate::billing::exchange::rate(&offer.currency, currency)
        .and_then(|r| offer.price_per_gpu_hour.checked_mul(r.rate))
}

/// The rentals billing now, their GPU named as the catalog (and the alerts) name it.
async fn paying_now(store: &Store, now: DateTime<Utc>) -> Result<Vec<Paying>, MarketError> {
    let rentals = crate::billing::ledger::list(store, now).await?;
    Ok(rentals
        .into_iter()
        .filter(|r| r.is_billing() && r.price_per_gpu_hour > Decimal::ZERO)
        .map(|r| Paying {
            gpu: crate::catalog::find_gpu(&r.gpu_model)
                .map_or_else(|| r.gpu_model.clone(), |spec| spec.name.clone()),
            instance: r.name,
            price_per_gpu_hour: r.price_per_gpu_hour,
            currency: r.currency.code().to_owned(),
        })
        .collect())
}

/// The alerts that hold now, marked as fired at `now` (so each is told at most once an hour).
pub async fn take_due(store: &Store, now: DateTime<Utc>) -> Result<Vec<AlertHit>, MarketError> {
    let offers = super::snapshot::all_offers(store).await?;
    let paying = paying_now(store, now).await?;
    let due = hits(&list(store).await?, &offers, &paying, now);
    let mut conn = acquire(store).await?;
    for hit in &due {
        market_rows::mark_fired(&mut conn, hit.alert.id, now).await?;
    }
    Ok(due)
}

/// [`take_due`], each hit sent to every saved webhook; returns the hits.
pub async fn fire_due(store: &Store, now: DateTime<Utc>) -> Result<Vec<AlertHit>, MarketError> {
    let due = take_due(store, now).await?;
    if due.is_empty() {
        return Ok(due);
    }
    let client = match crate::webhook::client() {
        Ok(client) => client,
        Err(err) => {
            tracing::warn!(%err, "market alerts: no webhook client");
            return Ok(due);
        }
    };
    for hit in &due {
        match crate::webhook::saved::send_to_all(&client, store, &hit.message(), now).await {
            Ok(results) => {
                for (hook, outcome) in results {
                    if let Err(err) = outcome {
                        tracing::warn!(hook = hook.id, %err, "market alert not delivered");
                    }
                }
            }
            Err(err) => tracing::warn!(%err, "market alert: webhooks unreadable"),
        }
    }
    Ok(due)
}

/// One refresh of every provider's offers and the alerts it set off: what the app's background
/// loop and its Refresh button both do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RefreshRound {
    pub report: super::RefreshReport,
    /// The alerts that hold now and were not told within the last hour (told now, webhooks too).
    pub alerts: Vec<AlertHit>,
}

/// Refresh the offers (`only` one provider, or all), then fire the alerts that now hold.
pub async fn refresh_and_fire(
    store: &Store,
    endpoints: &crate::account::Endpoints,
    only: Option<crate::account::Provider>,
    now: DateTime<Utc>,
) -> Result<RefreshRound, MarketError> {
    let report = super::refresh(store, endpoints, only, now).await?;
    let alerts = fire_due(store, now).await?;
    Ok(RefreshRound { report, alerts })
}

#[cfg(test)]
#[path = "alerts_tests.rs"]
mod tests;
