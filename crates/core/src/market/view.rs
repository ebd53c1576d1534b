//! What Choose GPU shows of the market: the kept offers ranked for the user's task, each with
//! its price converted to the user's currency (rate and month named), and, per provider, how
//! old its offers are, why the last refresh failed, and whether linking an account would add
//! offers. One call for the app; the CLI prints the same ranking through `recommend --market`.

use chrono::{DateTime, Utc};
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::filter::OfferFilter;
use super::offer::{Offer, PriceSource};
use super::rank::{for_task, RankedOffer, DEFAULT_DISK_GB};
use super::snapshot::load;
use super::MarketError;
use crate::account::providers::Offers;
use crate::account::Provider;
use crate::billing::exchange::{self, DatedRate};
use crate::catalog::recommend::RecommendRequest;
use crate::catalog::Recommendation;
use crate::store::Store;

/// Offers shown at most: the best of every fitting plan, not the whole market.
pub const SHOWN_OFFERS: usize = 30;

/// A ranked offer as the screen shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct MarketRow {
    #[serde(flatten)]
    pub ranked: RankedOffer,
    /// The offer's price per hour in the user's currency, when the currencies differ and the
    /// dated table has a rate (`rate` names it).
    #[ts(type = "string | null")]
    pub converted_per_hour: Option<Decimal>,
    /// The task cost in the user's currency, under the same rate.
    #[ts(type = "string | null")]
    pub converted_task_cost: Option<Decimal>,
    pub rate: Option<DatedRate>,
    /// It can be rented from the app: a catalog offer, or an AutoDL row (your last price) when
    /// an AutoDL account is linked, created by its compute spec.
    pub rentable: bool,
    /// For an AutoDL row, the documented compute spec of the same GPU and memory, when there
    /// is one ([`super::rent_autodl::spec_for`]).
    pub autodl_spec: Option<String>,
}

/// One provider's part of the market.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct MarketSource {
    pub provider: Provider,
    /// When its offers were fetched; `None` when it never answered.
    pub fetched_at: Option<DateTime<Utc>>,
    /// Why the last refresh failed (its earlier offers are still shown).
    pub last_error: Option<String>,
    /// Offers kept for it.
    #[ts(type = "number")]
    pub offers: u64,
    /// An account of this provider is linked.
    pub linked: bool,
    /// Its catalog needs a linked account (RunPod, Lambda); Vast.ai's search needs none; AutoDL
    /// has no price list, only your own last prices from the ledger.
    pub needs_account: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct MarketView {
    /// Best first: in stock, then the cheapest task, then the cheapest hour.
    pub rows: Vec<MarketRow>,
    pub sources: Vec<MarketSource>,
    /// The user's currency the conversions are in.
    pub currency: String,
}

/// The market for the fitting plans of `request` (the same request Choose GPU recommends from;
/// its `hours` is the task's length when known), through `filter`.
pub async fn for_request(
    store: &Store,
    request: &RecommendRequest,
    filter: &OfferFilter,
    currency: &str,
) -> Result<MarketView, MarketError> {
    let recommendation = crate::catalog::recommend(request)?;
    for_recommendation(store, &recommendation, request.hours, filter, currency).await
}

/// The market for `recommendation`'s fitting plans; `hours` is the task's length when known.
/// The filter's price cap is in `currency` here (offers in another one are converted at the
/// dated rate; one without a rate is left out while a cap is set).
pub async fn for_recommendation(
    store: &Store,
    recommendation: &Recommendation,
    hours: Option<Decimal>,
    filter: &OfferFilter,
    currency: &str,
) -> Result<MarketView, MarketError> {
    filter.validate()?;
    let snapshots = load(store).await?;
    let accounts = crate::account::list(store).await?;
    let offers: Vec<_> = snapshots
        .iter()
        .flat_map(|s| s.offers.clone())
        .filter(|offer| passes(filter, offer, currency))
        .collect();
    let rows = for_task(recommendation, hours, &offers, DEFAULT_DISK_GB)
        .into_iter()
        .take(SHOWN_OFFERS)
        .map(|ranked| {
            let linked = accounts.iter().any(|a| a.provider == ranked.offer.provider);
            convert(ranked, currency, linked)
        })
        .collect();
    let sources = Provider::ALL
        .iter()
        .map(|&provider| {
            let kept = snapshots.iter().find(|s| s.provider == provider);
            MarketSource {
                provider,
                fetched_at: kept.and_then(|s| s.fetched_at),
                last_error: kept.and_then(|s| s.last_error.clone()),
                offers: kept.map_or(0, |s| s.offers.len() as u64),
                linked: accounts.iter().any(|a| a.provider == provider),
                needs_account: provider.row().offers == Offers::WithAccountKey,
            }
        })
        .collect();
    Ok(MarketView {
        rows,
        sources,
        currency: currency.trim().to_ascii_uppercase(),
    })
}

/// `filter` holds for `offer`, its price cap read in `currency`.
fn passes(filter: &OfferFilter, offer: &Offer, currency: &str) -> bool {
    let unpriced = OfferFilter {
        max_price_per_gpu_hour: None,
        ..filter.clone()
    };
    unpriced.matches(offer)
        && filter.max_price_per_gpu_hour.is_none_or(|cap| {
            let price = if offer.currency.eq_ignore_ascii_case(currency) {
                Some(offer.price_per_gpu_hour)
            } else {
                exchange::rate(&offer.currency, currency)
                    .and_then(|r| offer.price_per_gpu_hour.checked_mul(r.rate))
            };
            price.is_some_and(|p| p <= cap)
        })
}

fn convert(ranked: RankedOffer, currency: &str, linked: bool) -> MarketRow {
    let from = ranked.offer.currency.as_str();
    let rate = exchange::rate(from, currency).filter(|r| r.from != r.to);
    let at = |amount: Decimal| {
        rate.as_ref()
            .and_then(|r| amount.checked_mul(r.rate))
            .map(|v| v.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero))
    };
    let offer = &ranked.offer;
    let autodl = offer.provider == Provider::Autodl;
    MarketRow {
        converted_per_hour: at(offer.price_per_hour),
        converted_task_cost: ranked.task_cost.and_then(at),
        rate,
        rentable: if autodl {
            linked
        } else {
            offer.source == PriceSource::Catalog
        },
        autodl_spec: autodl
            .then(|| super::rent_autodl::spec_for(&offer.gpu, offer.vram_gb))
            .flatten()
            .map(str::to_owned),
        ranked,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::offer::Stock;
    use rust_decimal_macros::dec;

    fn ranked(price: Decimal, currency: &str) -> RankedOffer {
        RankedOffer {
            offer: Offer {
                provider: Provider::Vast,
                offer_id: "1".into(),
                gpu: "RTX 4090".into(),
                count: 1,
                vram_gb: 24,
                price_per_hour: price,
                price_per_gpu_hour: price,
                currency: currency.into(),
                storage_per_gb_month: None,
                region: None,
                stock: Stock::High,
                interruptible: false,
                min_bid: None,
                reliability: None,
                fetched_at: DateTime::UNIX_EPOCH,
                source: PriceSource::Catalog,
            },
            task_hours: Some(dec!(10)),
            task_cost: Some(price * dec!(10)),
        }
    }

    #[test]
    fn dollars_are_shown_in_yuan_at_the_named_rate_and_yuan_stays_as_it_is() {
        let row = convert(ranked(dec!(0.35), "USD"), "CNY", false);
        assert_eq!(row.converted_per_hour, Some(dec!(2.49)));
        assert_eq!(row.converted_task_cost, Some(dec!(24.85)));
        let rate = row.rate.expect("a named rate");
        assert_eq!((rate.from.as_str(), rate.to.as_str()), ("USD", "CNY"));
        assert_eq!(rate.as_of, exchange::RATES_AS_OF);

        let same = convert(ranked(dec!(2.5), "CNY"), "cny", false);
        assert_eq!(same.converted_per_hour, None);
        assert_eq!(same.rate, None);
        // No rate in the table: nothing converted, nothing guessed.
        assert_eq!(
            convert(ranked(dec!(1), "EUR"), "CNY", false).converted_per_hour,
            None
        );
    }

    #[test]
    fn the_filter_caps_the_price_in_the_users_currency() {
        let dollars = ranked(dec!(0.35), "USD").offer;
        let yuan = ranked(dec!(2.0), "CNY").offer;
        let euros = ranked(dec!(0.1), "EUR").offer;
        let cap = |price| OfferFilter {
            max_price_per_gpu_hour: Some(price),
            ..OfferFilter::default()
        };
        // $0.35 is about ¥2.49 at the table's rate.
        assert!(!passes(&cap(dec!(2.4)), &dollars, "CNY"));
        assert!(passes(&cap(dec!(2.5)), &dollars, "CNY"));
        assert!(passes(&cap(dec!(2.0)), &yuan, "cny"));
        assert!(
            !passes(&cap(dec!(100)), &euros, "CNY"),
            "no rate: not shown under a cap"
        );
        assert!(passes(&OfferFilter::default(), &euros, "CNY"));
        let on_demand = OfferFilter {
            interruptible: Some(false),
            provider: Some(Provider::Vast),
            ..OfferFilter::default()
        };
        assert!(passes(&on_demand, &dollars, "CNY"));
        let elsewhere = OfferFilter {
            region: Some("texas".into()),
            ..OfferFilter::default()
        };
        assert!(
            !passes(&elsewhere, &dollars, "CNY"),
            "an offer with no region is not in Texas"
        );
    }
}
