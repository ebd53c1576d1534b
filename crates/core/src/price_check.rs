//! A second look at a price before it becomes a bill: an RTX 4090 typed as 360 per GPU-hour
//! (a slipped decimal point, the monthly price in the hourly field, yuan in a dollar preset)
//! goes through a form without a word, and the ledger then bills it faithfully.
//!
//! Pure: the caller brings what this user paid before ([`crate::catalog::earlier_prices`]), the
//! market's live offers for the card when a refresh kept any ([`LiveBand`], gathered by
//! `crate::market::snapshot::live_prices`) and, when known, what the card costs to buy; New
//! rental's review and every instance's status (imports included) call the same function. A
//! first-time renter has no history, so the card's launch price — converted at the fixed, dated
//! rate of [`crate::billing::exchange`] when the price is in yuan — still catches the 360 yuan
//! 4090; the market catches a card with no launch price here; and a plan whose hours at this price
//! outspend its budget is said before it starts.
//!
//! It questions a price per GPU-hour at ≥ 3× or ≤ ⅓ of what this user paid for the same GPU
//! (`FAR_FACTOR`), ≥ 3× the dearest or ≤ ⅓ of the cheapest live on-demand offer for it, one that
//! pays for the card within 168 h (`PAYBACK_HOURS`), and yuan in a dollar preset;
//! `usecase::price::check` reads the earlier and live prices from the store. Its own module, not
//! billing's: it reads the GPU catalog, which reads the ledger.

use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::billing::exchange::{self, DatedRate};
use crate::billing::money::display_rate;
use crate::billing::presets::ProviderKey;
use crate::catalog::recommend::PriceEntry;
use crate::catalog::{find_gpu, GpuSpec};

/// A price this many times what was paid before (or that fraction of it) is worth a question.
pub const FAR_FACTOR: Decimal = dec!(3);
/// Renting that pays for the card within this many hours is almost certainly a typo.
pub const PAYBACK_HOURS: Decimal = dec!(168);

/// Launch prices in US dollars (the maker's suggested price when the card went on sale), from
/// <https://www.tomsguide.com/news/nvidia-geforce-rtx-4090> (its table of starting prices).
/// Only cards with a sourced figure; the others get no pay-back check in dollars.
const LAUNCH_PRICES_USD: &[(&str, Decimal)] = &[
    ("rtx-4090", dec!(1599)),
    ("rtx-3090", dec!(1499)),
    ("rtx-3080", dec!(699)),
];

/// What the market asks for one card now in one currency: its cheapest and dearest in-stock,
/// on-demand offer from a provider's live catalog, per GPU-hour (bids and prices only seen in the
/// past are left out by whoever gathers these, `crate::market::snapshot::live_prices`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveBand {
    /// The card's catalog id (`h100-sxm`): resolved once per band, not once per offer and check.
    pub gpu_id: String,
    pub currency: String,
    pub low: Decimal,
    pub high: Decimal,
    /// How many offers the band was read from.
    pub offers: u32,
}

/// What the check looks at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct PriceCheckInput {
    pub gpu_model: String,
    #[ts(type = "string")]
    pub price_per_gpu_hour: Decimal,
    pub currency: String,
    /// The provider preset's key, when one was chosen.
    #[serde(default)]
    #[ts(optional)]
    pub provider: Option<String>,
    /// What buying one card costs, in `currency`, when the user knows; else the launch price
    /// is used where the currency is US dollars.
    #[serde(default)]
    #[ts(optional, type = "string")]
    pub card_price: Option<Decimal>,
    /// GPUs in the instance (1 when not given): the plan's cost counts each.
    #[serde(default)]
    #[ts(optional)]
    pub gpu_count: Option<u32>,
    /// The hours the renter plans, and the budget, in `currency`: together they say whether the
    /// plan fits.
    #[serde(default)]
    #[ts(optional, type = "string")]
    pub planned_hours: Option<Decimal>,
    #[serde(default)]
    #[ts(optional, type = "string")]
    pub budget: Option<Decimal>,
}

/// One reason to look at the price again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export)]
pub enum PriceWarning {
    /// Far from what this user paid for the same GPU before (`times` > 1: dearer).
    FarFromEarlier {
        #[ts(type = "string")]
        earlier: Decimal,
        currency: String,
        /// This price divided by the earlier one, two decimals.
        #[ts(type = "string")]
        times: Decimal,
    },
    /// Far outside what the market offers this GPU for now (`times` > 1: that many times its
    /// dearest live offer; < 1: that fraction of its cheapest).
    FarFromMarket {
        /// The cheapest and dearest live on-demand offer, per GPU-hour, in the check's currency.
        #[ts(type = "string")]
        low: Decimal,
        #[ts(type = "string")]
        high: Decimal,
        /// How many live offers the band was read from.
        offers: u32,
        #[ts(type = "string")]
        times: Decimal,
        /// The rate offers in another currency were converted at, when any were.
        #[ts(optional)]
        #[serde(default, skip_serializing_if = "Option::is_none")]
        converted_at: Option<DatedRate>,
    },
    /// At this price renting pays for the card itself within `hours` (less than a week).
    PaysForTheCard {
        #[ts(type = "string")]
        card_price: Decimal,
        #[ts(type = "string")]
        hours: Decimal,
        /// The rate the card's dollar price was converted at, when it was.
        #[ts(optional)]
        #[serde(default, skip_serializing_if = "Option::is_none")]
        converted_at: Option<DatedRate>,
    },
    /// The planned hours at this price cost more than the budget.
    OverBudget {
        #[ts(type = "string")]
        planned_cost: Decimal,
        #[ts(type = "string")]
        budget: Decimal,
    },
    /// The provider bills in another currency than the one entered.
    CurrencyDiffers { expected: String },
}

/// The check's answer: the warnings (empty: nothing odd) and the unit the price is in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct PriceCheck {
    pub warnings: Vec<PriceWarning>,
    /// The currency the price was read in; the figures are per GPU-hour.
    pub currency: String,
}

fn same_gpu(a: &GpuSpec, name: &str) -> bool {
    find_gpu(name).is_some_and(|b| b.id == a.id)
}

/// Whether `price` is [`FAR_FACTOR`] times `earlier` or more, or that fraction of it or less
/// (either way). An earlier price of zero or less compares with nothing.
pub fn far_from(price: Decimal, earlier: Decimal) -> bool {
    if earlier <= Decimal::ZERO {
        return false;
    }
    // A quotient too large for a decimal is as far as prices get.
    let Some(times) = price.checked_div(earlier) else {
        return true;
    };
    times >= FAR_FACTOR || times * FAR_FACTOR <= Decimal::ONE
}

/// Look at `input` against the prices paid before (`earlier`, newest last) and the market's live
/// offers (`live`).
pub fn price_check(
    input: &PriceCheckInput,
    earlier: &[PriceEntry],
    live: &[LiveBand],
) -> PriceCheck {
    let currency = input.currency.trim().to_ascii_uppercase();
    let price = input.price_per_gpu_hour;
    let mut warnings = Vec::new();
    if let Some(expected) = input
        .provider
        .as_deref()
        .and_then(|p| ProviderKey::parse(p).ok())
        .map(ProviderKey::currency)
        .filter(|expected| *expected != currency && *expected == "USD")
    {
        // Only a dollar preset is sure: a Chinese platform may well be paid in another way.
        warnings.push(PriceWarning::CurrencyDiffers {
            expected: expected.to_owned(),
        });
    }
    if price <= Decimal::ZERO {
        return PriceCheck { warnings, currency };
    }
    let gpu = find_gpu(&input.gpu_model);
    if let Some(paid) = gpu.and_then(|gpu| {
        earlier
            .iter()
            .rev()
            .find(|e| e.currency.eq_ignore_ascii_case(&currency) && same_gpu(gpu, &e.gpu))
    }) {
        if let Some(times) = (paid.price_per_hour > Decimal::ZERO)
            .then(|| price.checked_div(paid.price_per_hour))
            .flatten()
        {
            if far_from(price, paid.price_per_hour) {
                warnings.push(PriceWarning::FarFromEarlier {
                    earlier: display_rate(paid.price_per_hour),
                    currency: currency.clone(),
                    times: times.round_dp(2),
                });
            }
        }
    }
    if let Some(warning) = gpu.and_then(|gpu| far_from_market(price, gpu, &currency, live)) {
        warnings.push(warning);
    }
    if let Some((card_price, converted_at)) = card_price_in(input, gpu, &currency) {
        // A price of a billionth overflows the division: it cannot pay for anything, no warning.
        if let Some(hours) = card_price.checked_div(price).filter(|h| *h < PAYBACK_HOURS) {
            warnings.push(PriceWarning::PaysForTheCard {
                card_price: card_price.round_dp(0),
                hours: hours.round_dp(1),
                converted_at,
            });
        }
    }
    if let (Some(hours), Some(budget)) = (input.planned_hours, input.budget) {
        let gpus = Decimal::from(input.gpu_count.unwrap_or(1).max(1));
        let planned_cost = price.checked_mul(gpus).and_then(|p| p.checked_mul(hours));
        match planned_cost {
            Some(cost) if budget > Decimal::ZERO && hours > Decimal::ZERO && cost > budget => {
                warnings.push(PriceWarning::OverBudget {
                    planned_cost: cost.round_dp(2),
                    budget,
                });
            }
            _ => {}
        }
    }
    PriceCheck { warnings, currency }
}

/// The live band for `gpu` in `currency` (bands in another currency converted at the dated
/// rate; those without a rate left out), and a warning when `price` lies [`FAR_FACTOR`] outside
/// it. No live offer for the card: no band, no warning.
fn far_from_market(
    price: Decimal,
    gpu: &GpuSpec,
    currency: &str,
    live: &[LiveBand],
) -> Option<PriceWarning> {
    let mut converted_at = None;
    let mut band: Option<(Decimal, Decimal)> = None;
    let mut offers = 0u32;
    for each in live
        .iter()
        .filter(|b| b.gpu_id == gpu.id && b.low > Decimal::ZERO)
    {
        let rate = if each.currency.eq_ignore_ascii_case(currency) {
            Decimal::ONE
        } else {
            let Some(rate) = exchange::rate(&each.currency, currency) else {
                continue;
            };
            let factor = rate.rate;
            converted_at = Some(rate);
            factor
        };
        let (Some(low), Some(high)) = (each.low.checked_mul(rate), each.high.checked_mul(rate))
        else {
            continue;
        };
        band = Some(band.map_or((low, high), |(l, h)| (l.min(low), h.max(high))));
        offers = offers.saturating_add(each.offers);
    }
    let (low, high) = band?;
    let times = if far_from(price, high) && price > high {
        price.checked_div(high)?
    } else if far_from(price, low) && price < low {
        price.checked_div(low)?
    } else {
        return None;
    };
    Some(PriceWarning::FarFromMarket {
        low: display_rate(low),
        high: display_rate(high),
        offers,
        times: times.round_dp(2),
        converted_at,
    })
}

/// What one card costs in `currency`: the renter's own figure, else the launch price in dollars,
/// converted at the dated rate when the price is in another currency (with that rate).
fn card_price_in(
    input: &PriceCheckInput,
    gpu: Option<&GpuSpec>,
    currency: &str,
) -> Option<(Decimal, Option<DatedRate>)> {
    if let Some(own) = input.card_price.filter(|c| *c > Decimal::ZERO) {
        return Some((own, None));
    }
    let id = gpu.map(|g| g.id.as_str())?;
    let (_, usd) = LAUNCH_PRICES_USD.iter().find(|(g, _)| *g == id)?;
    if currency == "USD" {
        return Some((*usd, None));
    }
    let rate = exchange::rate("USD", currency)?;
    Some((usd.checked_mul(rate.rate)?, Some(rate)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::recommend::PriceOrigin;

    fn input(gpu: &str, price: Decimal, currency: &str, provider: Option<&str>) -> PriceCheckInput {
        PriceCheckInput {
            gpu_model: gpu.into(),
            price_per_gpu_hour: price,
            currency: currency.into(),
            provider: provider.map(str::to_owned),
            card_price: None,
            gpu_count: None,
            planned_hours: None,
            budget: None,
        }
    }

    fn paid(gpu: &str, price: Decimal, currency: &str) -> PriceEntry {
        PriceEntry {
            gpu: gpu.into(),
            price_per_hour: price,
            currency: currency.into(),
            origin: PriceOrigin::EarlierRental,
        }
    }

    #[test]
    fn a_hundredfold_price_for_a_gpu_rented_before_is_questioned() {
        let earlier = [paid("NVIDIA GeForce RTX 4090", dec!(3.6), "CNY")];
        let check = price_check(
            &input("RTX 4090", dec!(360), "CNY", Some("autodl")),
            &earlier,
            &[],
        );
        assert_eq!(
            check.warnings[0],
            PriceWarning::FarFromEarlier {
                earlier: dec!(3.6),
                currency: "CNY".into(),
                times: dec!(100),
            }
        );
        assert!(
            matches!(check.warnings[1..], [PriceWarning::PaysForTheCard { .. }]),
            "and it would pay for the card within two days: {check:?}"
        );
    }

    #[test]
    fn a_price_close_to_the_last_one_passes_and_a_far_cheaper_one_is_questioned() {
        let earlier = [
            paid("RTX 4090", dec!(9), "CNY"),
            paid("RTX 4090", dec!(2.2), "CNY"),
        ];
        let near = price_check(&input("4090", dec!(2.5), "CNY", None), &earlier, &[]);
        assert!(
            near.warnings.is_empty(),
            "2.5 against 2.2 last time: {near:?}"
        );
        let cheap = price_check(&input("4090", dec!(0.25), "CNY", None), &earlier, &[]);
        assert!(
            matches!(cheap.warnings[..], [PriceWarning::FarFromEarlier { .. }]),
            "a tenth of the last price (the hourly field holding a per-minute price?)"
        );
    }

    #[test]
    fn earlier_prices_in_another_currency_or_for_another_gpu_say_nothing() {
        let earlier = [
            paid("RTX 4090", dec!(0.4), "USD"),
            paid("A100 80GB", dec!(3.6), "CNY"),
        ];
        let check = price_check(&input("RTX 4090", dec!(3.6), "CNY", None), &earlier, &[]);
        assert!(check.warnings.is_empty(), "{check:?}");
    }

    /// One live offer of `gpu` as a band of its own.
    fn live(gpu: &str, price: Decimal, currency: &str) -> LiveBand {
        LiveBand {
            gpu_id: find_gpu(gpu).expect("a catalog card").id.clone(),
            currency: currency.into(),
            low: price,
            high: price,
            offers: 1,
        }
    }

    #[test]
    fn a_price_far_outside_the_live_market_is_questioned_within_it_passes() {
        // An H100 has no launch price here and this user never rented one: only the market knows.
        let market = [
            live("H100 80GB HBM3", dec!(2.39), "USD"),
            live("NVIDIA H100 80GB HBM3", dec!(2.99), "USD"),
            live("RTX 4090", dec!(0.34), "USD"),
        ];
        let typo = price_check(&input("H100 80GB", dec!(23.9), "USD", None), &[], &market);
        assert_eq!(
            typo.warnings,
            vec![PriceWarning::FarFromMarket {
                low: dec!(2.39),
                high: dec!(2.99),
                offers: 2,
                times: dec!(7.99),
                converted_at: None,
            }]
        );
        let cheap = price_check(&input("H100", dec!(0.239), "USD", None), &[], &market);
        assert!(
            matches!(cheap.warnings[..], [PriceWarning::FarFromMarket { times, .. }] if times == dec!(0.1)),
            "a tenth of the cheapest offer: {cheap:?}"
        );
        for fair in [dec!(2.5), dec!(4.5), dec!(1.0)] {
            let check = price_check(&input("H100", fair, "USD", None), &[], &market);
            assert!(check.warnings.is_empty(), "{fair}: {check:?}");
        }
        assert!(
            price_check(&input("A100 80GB", dec!(90), "USD", None), &[], &market)
                .warnings
                .iter()
                .all(|w| !matches!(w, PriceWarning::FarFromMarket { .. })),
            "no live offer for the card, no band"
        );
    }

    #[test]
    fn a_yuan_price_is_held_against_dollar_offers_through_the_dated_rate() {
        let market = [live("H100 80GB", dec!(2.5), "USD")];
        // 2.5 dollars at the dated rate is about 17.75 yuan: 177.5 yuan is ten times that.
        let check = price_check(&input("H100", dec!(177.5), "CNY", None), &[], &market);
        let [PriceWarning::FarFromMarket {
            low,
            times,
            converted_at: Some(rate),
            ..
        }] = &check.warnings[..]
        else {
            panic!("expected a market warning with its rate: {check:?}");
        };
        assert_eq!((rate.from.as_str(), rate.to.as_str()), ("USD", "CNY"));
        assert_eq!(*low, display_rate(dec!(2.5) * rate.rate));
        assert_eq!(*times, (dec!(177.5) / (dec!(2.5) * rate.rate)).round_dp(2));
        let fair = price_check(&input("H100", dec!(16), "CNY", None), &[], &market);
        assert!(fair.warnings.is_empty(), "{fair:?}");
    }

    #[test]
    fn a_price_that_pays_for_the_card_within_a_week_is_questioned() {
        // $1,599 at $40/h: 40 hours.
        let check = price_check(
            &input("RTX 4090", dec!(40), "USD", Some("runpod")),
            &[],
            &[],
        );
        assert_eq!(
            check.warnings,
            vec![PriceWarning::PaysForTheCard {
                card_price: dec!(1599),
                hours: dec!(40.0),
                converted_at: None,
            }]
        );
        let fair = price_check(
            &input("RTX 4090", dec!(0.69), "USD", Some("runpod")),
            &[],
            &[],
        );
        assert!(fair.warnings.is_empty(), "{fair:?}");
        let mut own = input("RTX 4090", dec!(360), "CNY", None);
        own.card_price = Some(dec!(13000));
        assert!(matches!(
            price_check(&own, &[], &[]).warnings[..],
            [PriceWarning::PaysForTheCard { .. }]
        ));
        assert!(
            price_check(&input("H100 80GB", dec!(360), "CNY", None), &[], &[])
                .warnings
                .is_empty(),
            "no launch price is known for this card, so no pay-back is claimed"
        );
    }

    #[test]
    fn a_first_time_typo_in_yuan_is_caught_through_the_dated_rate() {
        // 360 yuan per GPU-hour for a 4090 with no history: the $1,599 card at 7.10 is
        // 11,353 yuan, paid back in 31.5 hours.
        let check = price_check(
            &input("RTX 4090", dec!(360), "CNY", Some("autodl")),
            &[],
            &[],
        );
        let [PriceWarning::PaysForTheCard {
            card_price,
            hours,
            converted_at: Some(rate),
        }] = &check.warnings[..]
        else {
            panic!("expected a pay-back warning with its rate: {check:?}");
        };
        assert_eq!((*card_price, *hours), (dec!(11353), dec!(31.5)));
        assert_eq!((rate.from.as_str(), rate.to.as_str()), ("USD", "CNY"));
        assert_eq!(rate.as_of, exchange::RATES_AS_OF);
        let fair = price_check(
            &input("RTX 4090", dec!(2.28), "CNY", Some("autodl")),
            &[],
            &[],
        );
        assert!(fair.warnings.is_empty(), "{fair:?}");
    }

    #[test]
    fn a_plan_that_outspends_its_budget_is_said_before_it_starts() {
        // 10 hours of one 4090 at 360 yuan against a 100 yuan budget.
        let mut plan = input("RTX 4090", dec!(360), "CNY", Some("autodl"));
        plan.card_price = Some(dec!(1_000_000));
        plan.planned_hours = Some(dec!(10));
        plan.budget = Some(dec!(100));
        assert_eq!(
            price_check(&plan, &[], &[]).warnings,
            vec![PriceWarning::OverBudget {
                planned_cost: dec!(3600),
                budget: dec!(100),
            }]
        );
        // Eight GPUs count eight times; a plan inside its budget says nothing.
        plan.price_per_gpu_hour = dec!(2);
        plan.gpu_count = Some(8);
        assert!(matches!(
            price_check(&plan, &[], &[]).warnings[..],
            [PriceWarning::OverBudget { planned_cost, .. }] if planned_cost == dec!(160)
        ));
        plan.gpu_count = Some(1);
        assert!(price_check(&plan, &[], &[]).warnings.is_empty());
        // Absurd figures overflow into no warning, never a panic.
        plan.planned_hours = Some(Decimal::MAX);
        plan.price_per_gpu_hour = Decimal::MAX;
        let _ = price_check(&plan, &[], &[]);
    }

    #[test]
    fn yuan_in_a_dollar_preset_is_questioned() {
        let check = price_check(
            &input("RTX 4090", dec!(0.69), "CNY", Some("runpod")),
            &[],
            &[],
        );
        assert_eq!(
            check.warnings,
            vec![PriceWarning::CurrencyDiffers {
                expected: "USD".into()
            }]
        );
        assert!(
            price_check(&input("RTX 4090", dec!(2), "CNY", Some("autodl")), &[], &[])
                .warnings
                .is_empty()
        );
    }

    #[test]
    fn the_presets_bill_in_their_own_currency() {
        for key in [
            ProviderKey::Runpod,
            ProviderKey::Vast,
            ProviderKey::Lambda,
            ProviderKey::Aws,
            ProviderKey::Gcp,
        ] {
            assert_eq!(key.preset().currency, "USD", "{key:?}");
        }
        assert_eq!(ProviderKey::Autodl.preset().currency, "CNY");
    }
}
