//! `market list`: the kept offers through the user's filters, cheapest first.

use std::cmp::Ordering;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::offer::Offer;
use super::snapshot::all_offers;
use super::MarketError;
use crate::account::Provider;
use crate::store::Store;

/// What `market list` and Choose GPU filter by; every field optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct OfferFilter {
    /// Any spelling the GPU catalog knows ("4090", "NVIDIA H100 80GB HBM3").
    pub gpu: Option<String>,
    pub count: Option<u32>,
    pub min_vram_gb: Option<u32>,
    #[ts(type = "string | null")]
    pub max_price_per_gpu_hour: Option<Decimal>,
    pub provider: Option<Provider>,
    /// Part of the region's name, any case.
    pub region: Option<String>,
    /// `Some(true)` interruptible only, `Some(false)` on-demand only.
    pub interruptible: Option<bool>,
}

impl OfferFilter {
    pub fn validate(&self) -> Result<(), MarketError> {
        if self.count == Some(0) {
            return Err(MarketError::InvalidInput(
                "--count must be at least 1".into(),
            ));
        }
        if self
            .max_price_per_gpu_hour
            .is_some_and(|p| p <= Decimal::ZERO)
        {
            return Err(MarketError::InvalidInput(
                "--max-price-per-gpu-hour must be more than zero".into(),
            ));
        }
        if let Some(gpu) = &self.gpu {
            if gpu.trim().is_empty() {
                return Err(MarketError::InvalidInput("--gpu names no GPU".into()));
            }
        }
        Ok(())
    }

    pub fn matches(&self, offer: &Offer) -> bool {
        self.gpu.as_deref().is_none_or(|g| same_gpu(g, offer))
            && self.count.is_none_or(|c| offer.count == c)
            && self.min_vram_gb.is_none_or(|v| offer.vram_gb >= v)
            && self
                .max_price_per_gpu_hour
                .is_none_or(|p| offer.price_per_gpu_hour <= p)
            && self.provider.is_none_or(|p| offer.provider == p)
            && self.region.as_deref().is_none_or(|r| {
                offer
                    .region
                    .as_deref()
                    .is_some_and(|o| o.to_lowercase().contains(&r.trim().to_lowercase()))
            })
            && self.interruptible.is_none_or(|i| offer.interruptible == i)
    }
}

/// Whether `wanted` names the offer's GPU: the same catalog entry, or its words in the offer's
/// name ("H100" is every H100 board, "A10" is not an A100).
pub fn same_gpu(wanted: &str, offer: &Offer) -> bool {
    let offer_spec =
        crate::catalog::find_gpu_with_memory(&offer.gpu, Some(u64::from(offer.vram_gb) * 1024));
    let same_entry = match (crate::catalog::find_gpu(wanted), offer_spec) {
        (Some(a), Some(b)) => a.id == b.id,
        _ => false,
    };
    same_entry || words_within(wanted, &offer.gpu)
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// `wanted`'s words, in order and side by side, among `name`'s.
fn words_within(wanted: &str, name: &str) -> bool {
    let wanted = words(wanted);
    let name = words(name);
    !wanted.is_empty() && name.windows(wanted.len()).any(|w| w == wanted.as_slice())
}

/// Cheapest first: the provider's catalogs before "your last price" rows, then by price per
/// GPU-hour, then by the whole offer's price, then provider and id (a stable order).
pub fn cheapest_first(a: &Offer, b: &Offer) -> Ordering {
    a.source
        .cmp(&b.source)
        .then(a.currency.cmp(&b.currency))
        .then(a.price_per_gpu_hour.cmp(&b.price_per_gpu_hour))
        .then(a.price_per_hour.cmp(&b.price_per_hour))
        .then(a.provider.as_str().cmp(b.provider.as_str()))
        .then(a.offer_id.cmp(&b.offer_id))
}

/// Cheapest first whatever the currency: by the price per GPU-hour in dollars at the dated
/// rate of [`crate::billing::exchange`] (a yuan offer at ¥9 comes before a dollar one at $1.49),
/// a currency the table cannot convert after every one it can, then [`cheapest_first`]. For
/// picking the one cheapest offer; listings keep one currency together instead.
pub fn cheapest_in_any_currency(a: &Offer, b: &Offer) -> Ordering {
    let in_dollars = |offer: &Offer| {
        crate::billing::exchange::convert(offer.price_per_gpu_hour, &offer.currency, "USD")
    };
    match (in_dollars(a), in_dollars(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
    .then_with(|| cheapest_first(a, b))
}

/// The kept offers that pass `filter`, cheapest first.
pub async fn list(store: &Store, filter: &OfferFilter) -> Result<Vec<Offer>, MarketError> {
    filter.validate()?;
    let mut offers: Vec<Offer> = all_offers(store)
        .await?
        .into_iter()
        .filter(|o| filter.matches(o))
        .collect();
    offers.sort_by(cheapest_first);
    Ok(offers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::offer::{PriceSource, Stock};

    fn offer(provider: Provider, per_gpu_hour: &str, currency: &str) -> Offer {
        let price: Decimal = per_gpu_hour.parse().expect("a price");
        Offer {
            provider,
            offer_id: format!("{provider:?}-{per_gpu_hour}"),
            gpu: "NVIDIA A100 80GB".to_owned(),
            count: 1,
            vram_gb: 80,
            price_per_hour: price,
            price_per_gpu_hour: price,
            currency: currency.to_owned(),
            storage_per_gb_month: None,
            region: None,
            stock: Stock::High,
            interruptible: false,
            min_bid: None,
            reliability: None,
            fetched_at: chrono::DateTime::from_timestamp(1_790_000_000, 0).expect("a valid time"),
            source: PriceSource::Catalog,
        }
    }

    #[test]
    fn the_cheapest_offer_is_judged_in_one_currency() {
        let dollars = offer(Provider::Runpod, "1.49", "USD");
        let dear_yuan = offer(Provider::Autodl, "12.00", "CNY"); // $1.69
        let cheap_yuan = offer(Provider::Autodl, "9.00", "CNY"); // $1.27
        let unknown = offer(Provider::Vast, "0.10", "EUR");
        let cheapest = |offers: &[&Offer]| {
            offers
                .iter()
                .copied()
                .min_by(|a, b| cheapest_in_any_currency(a, b))
                .map(|o| o.offer_id.clone())
        };
        assert_eq!(
            cheapest(&[&dear_yuan, &dollars]),
            Some(dollars.offer_id.clone())
        );
        assert_eq!(
            cheapest(&[&dollars, &dear_yuan, &cheap_yuan]),
            Some(cheap_yuan.offer_id.clone())
        );
        assert_eq!(
            cheapest(&[&unknown, &dear_yuan]),
            Some(dear_yuan.offer_id.clone()),
            "a price that cannot be compared never counts as the cheapest"
        );
        // The listing's order still keeps one currency together.
        assert_eq!(cheapest_first(&dear_yuan, &dollars), Ordering::Less);
    }

    #[test]
    fn gpu_words_match_whole_words_in_order() {
        for (wanted, name, expected) in [
            ("4090", "NVIDIA GeForce RTX 4090", true),
            ("rtx 4090", "NVIDIA GeForce RTX 4090", true),
            ("H100", "NVIDIA H100 80GB HBM3", true),
            ("A10", "NVIDIA A100-SXM4-80GB", false),
            ("4090 RTX", "NVIDIA GeForce RTX 4090", false),
            ("", "NVIDIA A10", false),
        ] {
            assert_eq!(words_within(wanted, name), expected, "{wanted} in {name}");
        }
    }
}
