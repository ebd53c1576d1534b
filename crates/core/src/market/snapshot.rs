//! Refreshing the market and keeping it: one SQLite row per provider (migration 0350) with its
//! last good offers. Stale-while-revalidate: a failed refresh keeps the offers and their
//! `fetched_at`, recording only the failure and when the next request may go (doubling after a
//! 429 or a failure, so a busy provider is not asked again and again).

use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::Method;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::offer::{Offer, PriceSource, Stock};
use super::parse::{self, Parsed};
use super::MarketError;
use crate::account::http::Api;
use crate::account::providers::Offers;
use crate::account::{key_of, AccountError, AccountRef, Backoff, Endpoints, Provider};
use crate::billing::ledger;
use crate::ssh::Secret;
use crate::store::market as market_rows;
use crate::store::{Store, StoreError};

async fn acquire(store: &Store) -> Result<sqlx::pool::PoolConnection<sqlx::Sqlite>, StoreError> {
    Ok(store.pool().acquire().await?)
}

/// How often the app refreshes while it runs.
pub const REFRESH_EVERY: Duration = Duration::from_secs(15 * 60);
/// Offers asked of Vast.ai per search (one request per refresh).
const VAST_LIMIT: u32 = 1000;
/// One try per refresh: the back-off is kept in the database, not slept through.
const ONE_TRY: Backoff = Backoff {
    first: Duration::from_secs(1),
    attempts: 1,
};

/// One provider's snapshot as kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Snapshot {
    pub provider: Provider,
    pub offers: Vec<Offer>,
    /// When `offers` were fetched; `None` before the first refresh that went through.
    pub fetched_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub failed_at: Option<DateTime<Utc>>,
    pub next_refresh_after: Option<DateTime<Utc>>,
}

/// What one provider's refresh did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ProviderRefresh {
    pub provider: Provider,
    /// When the offers now kept were fetched (this refresh's time when it went through).
    pub fetched_at: Option<DateTime<Utc>>,
    /// Offers kept now.
    #[ts(type = "number")]
    pub offers: u64,
    /// Why this refresh did not go through; the earlier offers are kept.
    pub error: Option<String>,
    /// Rows of the provider's answer that were skipped, and why (a few).
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RefreshReport {
    pub providers: Vec<ProviderRefresh>,
}

/// Every provider's snapshot (providers never refreshed are absent).
pub async fn load(store: &Store) -> Result<Vec<Snapshot>, MarketError> {
    let rows = market_rows::snapshots(&mut *acquire(store).await?).await?;
    let mut out = Vec::new();
    for row in rows {
        let Ok(provider) = Provider::parse(&row.provider) else {
            continue;
        };
        // A row this version cannot read counts as no offers, never as a failure.
        let offers: Vec<Offer> = serde_json::from_str(&row.offers).unwrap_or_default();
        out.push(Snapshot {
            provider,
            offers,
            fetched_at: row.fetched_at,
            last_error: row.last_error,
            failed_at: row.failed_at,
            next_refresh_after: row.next_refresh_after,
        });
    }
    Ok(out)
}

/// Every kept offer of every provider.
pub async fn all_offers(store: &Store) -> Result<Vec<Offer>, MarketError> {
    Ok(load(store)
        .await?
        .into_iter()
        .flat_map(|s| s.offers)
        .collect())
}

/// How old a kept catalog may be and still count as what the market asks now.
pub const LIVE_FOR: chrono::Duration = chrono::Duration::days(7);

/// What the market asks per card, for the price checks: kept offers that are in stock, on demand
/// (bids and interruptible offers say little of what a rental costs) and read from a provider's
/// catalog within [`LIVE_FOR`] of `now`, as one band per card and currency. The cards are told
/// apart by memory and looked up once per distinct name, as ranking does ([`super::rank`]).
pub async fn live_prices(
    store: &Store,
    now: DateTime<Utc>,
) -> Result<Vec<crate::price_check::LiveBand>, MarketError> {
    use std::collections::HashMap;
    let offers: Vec<Offer> = all_offers(store)
        .await?
        .into_iter()
        .filter(|o| !o.interruptible && o.stock.in_stock() && o.source == PriceSource::Catalog)
        .filter(|o| {
            now - o.fetched_at <= LIVE_FOR && o.price_per_gpu_hour > rust_decimal::Decimal::ZERO
        })
        .collect();
    let cards = super::rank::catalog_ids(offers.iter());
    let mut bands: HashMap<(&str, String), crate::price_check::LiveBand> = HashMap::new();
    for (offer, card) in offers.iter().zip(cards) {
        let Some(card) = card else { continue };
        let price = offer.price_per_gpu_hour;
        let currency = offer.currency.to_ascii_uppercase();
        bands
            .entry((card, currency.clone()))
            .and_modify(|band| {
                band.low = band.low.min(price);
                band.high = band.high.max(price);
                band.offers = band.offers.saturating_add(1);
            })
            .or_insert(crate::price_check::LiveBand {
                gpu_id: card.to_owned(),
                currency,
                low: price,
                high: price,
                offers: 1,
            });
    }
    Ok(bands.into_values().collect())
}

async fn save_good(
    store: &Store,
    provider: Provider,
    offers: &[Offer],
    now: DateTime<Utc>,
) -> Result<(), MarketError> {
    let json =
        serde_json::to_string(offers).map_err(|err| MarketError::InvalidInput(err.to_string()))?;
    let mut conn = acquire(store).await?;
    Ok(market_rows::save_offers(&mut conn, provider.as_str(), json, now).await?)
}

/// Keep the offers; record the failure and the next time a request may go.
async fn save_failure(
    store: &Store,
    provider: Provider,
    error: &str,
    rate_limited: bool,
    now: DateTime<Utc>,
) -> Result<(), MarketError> {
    let mut conn = acquire(store).await?;
    let failures = market_rows::failures(&mut conn, provider.as_str()).await?;
    let wait = next_wait(failures + 1, rate_limited);
    Ok(market_rows::save_failure(&mut conn, provider.as_str(), error, now, now + wait).await?)
}

/// The wait before the next request after `failures` failed ones in a row: a 429 waits a minute,
/// doubling to an hour; another failure 30 s, doubling to 15 minutes.
pub fn next_wait(failures: i64, rate_limited: bool) -> chrono::Duration {
    let (first, cap) = if rate_limited { (60, 3600) } else { (30, 900) };
    let doublings = (failures - 1).clamp(0, 10) as u32;
    chrono::Duration::seconds((first * 2i64.pow(doublings)).min(cap))
}

/// Refresh one provider or all of them (side by side), on demand or from the app's timer.
pub async fn refresh(
    store: &Store,
    endpoints: &Endpoints,
    only: Option<Provider>,
    now: DateTime<Utc>,
) -> Result<RefreshReport, MarketError> {
    let providers: Vec<Provider> = match only {
        Some(p) => vec![p],
        None => Provider::ALL.to_vec(),
    };
    let kept = load(store).await?;
    let fetches = providers.iter().map(|&provider| {
        let waiting = kept
            .iter()
            .find(|s| s.provider == provider)
            .and_then(|s| s.next_refresh_after)
            .filter(|t| *t > now);
        async move {
            match waiting {
                Some(until) => (provider, Fetch::Waiting(until)),
                None => (provider, fetch(store, endpoints, provider, now).await),
            }
        }
    });
    let results = futures::future::join_all(fetches).await;
    let mut report = RefreshReport {
        providers: Vec::new(),
    };
    for (provider, result) in results {
        let previous = kept.iter().find(|s| s.provider == provider);
        let kept_count = previous.map_or(0, |s| s.offers.len()) as u64;
        let kept_at = previous.and_then(|s| s.fetched_at);
        let entry = match result {
            Fetch::Got(parsed) => {
                save_good(store, provider, &parsed.offers, now).await?;
                ProviderRefresh {
                    provider,
                    fetched_at: Some(now),
                    offers: parsed.offers.len() as u64,
                    error: None,
                    warnings: parsed.warnings,
                }
            }
            Fetch::Failed(err) => {
                let rate_limited = matches!(err, AccountError::RateLimited { .. });
                let text = err.to_string();
                save_failure(store, provider, &text, rate_limited, now).await?;
                ProviderRefresh {
                    provider,
                    fetched_at: kept_at,
                    offers: kept_count,
                    error: Some(text),
                    warnings: Vec::new(),
                }
            }
            Fetch::NoAccount => ProviderRefresh {
                provider,
                fetched_at: kept_at,
                offers: kept_count,
                error: Some(format!(
                    "no {} account: `leasehold account add {}` adds its catalog",
                    provider.display(),
                    provider.as_str()
                )),
                warnings: Vec::new(),
            },
            Fetch::Waiting(until) => ProviderRefresh {
                provider,
                fetched_at: kept_at,
                offers: kept_count,
                error: Some(format!(
                    "{} was busy or failing; the next request goes after {}",
                    provider.display(),
                    until.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                )),
                warnings: Vec::new(),
            },
        };
        report.providers.push(entry);
    }
    Ok(report)
}

enum Fetch {
    Got(Parsed),
    Failed(AccountError),
    NoAccount,
    Waiting(DateTime<Utc>),
}

/// The key of the provider's first account (by label), or `None` when none is linked.
pub(crate) async fn account_key(
    store: &Store,
    provider: Provider,
) -> Result<Option<(AccountRef, Secret)>, AccountError> {
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    let rows = crate::store::accounts::list_accounts(&mut conn).await?;
    let Some(row) = rows.into_iter().find(|r| r.provider == provider.as_str()) else {
        return Ok(None);
    };
    let account = AccountRef {
        provider,
        label: row.label,
    };
    let key = key_of(&account, row.key_env.as_deref())?;
    Ok(Some((account, key)))
}

async fn fetch(
    store: &Store,
    endpoints: &Endpoints,
    provider: Provider,
    now: DateTime<Utc>,
) -> Fetch {
    let result = match provider.row().offers {
        Offers::YourLastPrices => return your_last_prices(store, provider, now).await,
        Offers::Public => catalog(endpoints, provider, Secret::new(""), now).await,
        Offers::WithAccountKey => match account_key(store, provider).await {
            Ok(Some((_, key))) => catalog(endpoints, provider, key, now).await,
            Ok(None) => return Fetch::NoAccount,
            Err(err) => Err(err),
        },
    };
    match result {
        Ok(parsed) => Fetch::Got(parsed),
        Err(err) => Fetch::Failed(err),
    }
}

/// One read of `provider`'s published offers, with `key` where its row says it needs one.
async fn catalog(
    endpoints: &Endpoints,
    provider: Provider,
    key: Secret,
    now: DateTime<Utc>,
) -> Result<Parsed, AccountError> {
    let api = Api::new(provider, endpoints.base(provider), key, ONE_TRY)?;
    read_catalog(&api, now).await
}

/// The published offers of `api`'s provider, read through it (keyless for a public catalog):
/// a refresh, and the look at an offer again just before it is rented.
pub(super) async fn read_catalog(api: &Api, now: DateTime<Utc>) -> Result<Parsed, AccountError> {
    let provider = api.provider();
    let runpod_query = [
        ("include", "AVAILABILITY".to_owned()),
        ("product", "POD".to_owned()),
    ];
    let answer = match provider {
        Provider::Vast => {
            let query = parse::vast_query(VAST_LIMIT);
            api.send(Method::POST, "/api/v0/bundles/", &[], Some(&query))
                .await?
        }
        Provider::Runpod => {
            api.send(Method::GET, "/v2/catalog/gpus", &runpod_query, None)
                .await?
        }
        Provider::Lambda => {
            api.send(Method::GET, "/api/v1/instance-types", &[], None)
                .await?
        }
        // Its row says it publishes none; nothing is asked.
        Provider::Autodl => return Ok(Parsed::default()),
    };
    let answer = answer.or_refusal(provider.display(), None)?;
    Ok(match provider {
        Provider::Vast => parse::vast(&answer.body, now),
        Provider::Runpod => parse::runpod(&answer.body, now),
        Provider::Lambda => parse::lambda(&answer.body, now),
        Provider::Autodl => Parsed::default(),
    })
}

/// For a provider that publishes no prices (AutoDL): its rows are the user's own rentals there,
/// the newest per GPU, count and region, marked "your last price" and dated when that rental
/// was recorded.
async fn your_last_prices(store: &Store, provider: Provider, now: DateTime<Utc>) -> Fetch {
    let rentals = match ledger::list(store, now).await {
        Ok(rentals) => rentals,
        Err(err) => {
            return Fetch::Failed(AccountError::Malformed {
                provider: provider.display(),
                detail: err.to_string(),
            })
        }
    };
    let mut parsed = Parsed::default();
    let mut theirs: Vec<_> = rentals
        .into_iter()
        .filter(|r| r.provider == provider.preset().as_str())
        .collect();
    theirs.sort_by_key(|row| std::cmp::Reverse(row.created_at));
    for rental in theirs {
        let spec = crate::catalog::find_gpu(&rental.gpu_model);
        let vram_gb = spec
            .and_then(|s| s.memory_gb.as_ref())
            .map_or(0, |m| m.value.round() as u32);
        let gpu = spec.map_or_else(|| rental.gpu_model.clone(), |s| s.name.clone());
        let duplicate = parsed.offers.iter().any(|o: &Offer| {
            o.gpu == gpu && o.count == rental.gpu_count && o.region == rental.region
        });
        if duplicate || rental.price_per_gpu_hour <= rust_decimal::Decimal::ZERO {
            continue;
        }
        parsed.offers.push(Offer {
            provider,
            offer_id: format!("ledger-{}", rental.id),
            gpu,
            count: rental.gpu_count,
            vram_gb,
            price_per_hour: rental.price_per_gpu_hour
                * rust_decimal::Decimal::from(rental.gpu_count),
            price_per_gpu_hour: rental.price_per_gpu_hour,
            currency: rental.currency.code().to_owned(),
            storage_per_gb_month: None,
            region: rental.region.clone(),
            stock: Stock::Unknown,
            interruptible: false,
            min_bid: None,
            reliability: None,
            fetched_at: rental.created_at,
            source: PriceSource::YourLastPrice,
        });
    }
    Fetch::Got(parsed)
}

#[cfg(test)]
mod tests {
    use super::next_wait;

    #[test]
    fn waits_double_up_to_their_cap() {
        let secs = |f, r| next_wait(f, r).num_seconds();
        assert_eq!(
            [secs(1, true), secs(2, true), secs(3, true), secs(9, true)],
            [60, 120, 240, 3600]
        );
        assert_eq!(
            [secs(1, false), secs(2, false), secs(20, false)],
            [30, 60, 900]
        );
    }
}
