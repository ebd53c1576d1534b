//! Real offers for the recommender's plans, ranked by what the task will cost to finish.
//!
//! An offer belongs to a plan when it is the plan's card (the same catalog entry, told apart by
//! memory) in the plan's count, and the plan fits the estimate: an offer that does not fit the
//! VRAM is never an option. When the task has a duration, `hours` are as planned for the
//! recommender's first fitting plan whose card has a known throughput (usually the one `leasehold
//! recommend` prints on top); another plan
//! takes `hours × that plan's FP16 tensor TFLOPS × count ÷ (its own × its count)` from the
//! catalog (linear scaling, no communication overhead: an optimistic bound for many GPUs).
//! The task cost is then `price_per_hour × task hours + storage per GB-month × disk × task
//! hours ÷ 730`. In-stock offers come first, then the cheapest task.

use std::cmp::Ordering;
use std::collections::HashMap;

use rust_decimal::prelude::FromPrimitive;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::filter::cheapest_first;
use super::offer::Offer;
use crate::catalog::recommend::Candidate;
use crate::catalog::Recommendation;

/// Disk assumed for the storage part of a task cost, GB.
pub const DEFAULT_DISK_GB: u32 = 50;
/// Offers shown per plan.
pub const OFFERS_PER_PLAN: usize = 5;
/// Hours in the month storage prices are quoted for (365 × 24 ÷ 12).
const HOURS_PER_MONTH: i64 = 730;

/// An offer with what the task would cost on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RankedOffer {
    #[serde(flatten)]
    pub offer: Offer,
    /// Hours the task takes on this offer; `None` without a duration or a known throughput.
    #[ts(type = "string | null")]
    pub task_hours: Option<Decimal>,
    /// In the offer's currency.
    #[ts(type = "string | null")]
    pub task_cost: Option<Decimal>,
}

fn throughput(c: &Candidate) -> Option<Decimal> {
    let tflops = Decimal::from_f64(c.fp16_tensor_tflops?)?;
    (tflops > Decimal::ZERO).then(|| tflops * Decimal::from(c.count))
}

/// The catalog entry `offer`'s GPU is (told apart by memory), if the catalog knows it.
fn catalog_id(offer: &Offer) -> Option<&'static str> {
    crate::catalog::find_gpu_with_memory(&offer.gpu, Some(u64::from(offer.vram_gb) * 1024))
        .map(|spec| spec.id.as_str())
}

/// Whether `offer` is `plan`'s card in `plan`'s count.
pub fn serves(offer: &Offer, plan: &Candidate) -> bool {
    serves_as(offer, catalog_id(offer), plan)
}

/// The catalog entry of each offer, looked up once per distinct GPU name and memory (a market
/// of thousands of offers names a few dozen cards).
pub(crate) fn catalog_ids<'a>(
    offers: impl Iterator<Item = &'a Offer>,
) -> Vec<Option<&'static str>> {
    let mut known: HashMap<(&str, u32), Option<&'static str>> = HashMap::new();
    offers
        .map(|offer| {
            *known
                .entry((offer.gpu.as_str(), offer.vram_gb))
                .or_insert_with(|| catalog_id(offer))
        })
        .collect()
}

/// [`serves`] with the offer's catalog entry already looked up: the lookup reads the whole
/// catalog, so ranking does it once per offer, not once per offer and plan.
fn serves_as(offer: &Offer, id: Option<&str>, plan: &Candidate) -> bool {
    plan.fits && offer.count == plan.count && id == Some(plan.gpu_id.as_str())
}

/// The task's hours on `plan`, from `hours` on the first fitting plan.
pub fn task_hours(
    recommendation: &Recommendation,
    plan: &Candidate,
    hours: Option<Decimal>,
) -> Option<Decimal> {
    let hours = hours?;
    let reference = recommendation
        .candidates
        .iter()
        .find(|c| c.fits && throughput(c).is_some())?;
    Some((hours * throughput(reference)? / throughput(plan)?).round_dp(4))
}

/// `offer`'s cost for `task_hours` with `disk_gb` of storage.
pub fn task_cost(offer: &Offer, task_hours: Decimal, disk_gb: u32) -> Decimal {
    let storage =
        offer.storage_per_gb_month.unwrap_or_default() * Decimal::from(disk_gb) * task_hours
            / Decimal::from(HOURS_PER_MONTH);
    (offer.price_per_hour * task_hours + storage).round_dp(2)
}

/// In stock first, the provider's catalogs before your last prices, one currency together, then
/// the cheapest task (the cheapest hour when there is no task cost).
pub fn best_first(a: &RankedOffer, b: &RankedOffer) -> Ordering {
    b.offer
        .stock
        .in_stock()
        .cmp(&a.offer.stock.in_stock())
        .then(a.offer.source.cmp(&b.offer.source))
        .then(a.offer.currency.cmp(&b.offer.currency))
        .then(match (a.task_cost, b.task_cost) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        })
        .then_with(|| cheapest_first(&a.offer, &b.offer))
}

/// Every offer that serves a fitting plan, ranked for the task.
pub fn for_task(
    recommendation: &Recommendation,
    hours: Option<Decimal>,
    offers: &[Offer],
    disk_gb: u32,
) -> Vec<RankedOffer> {
    let ids = catalog_ids(offers.iter());
    let mut ranked = Vec::new();
    for plan in recommendation.candidates.iter().filter(|c| c.fits) {
        let plan_hours = task_hours(recommendation, plan, hours);
        let serving = offers
            .iter()
            .zip(&ids)
            .filter(|(offer, id)| serves_as(offer, **id, plan))
            .map(|(offer, _)| offer);
        for offer in serving {
            ranked.push(RankedOffer {
                offer: offer.clone(),
                task_hours: plan_hours,
                task_cost: plan_hours.map(|h| task_cost(offer, h, disk_gb)),
            });
        }
    }
    ranked.sort_by(best_first);
    ranked
}

/// The best [`OFFERS_PER_PLAN`] offers of each candidate, in the candidates' order (empty for
/// a plan that does not fit or has no offer).
pub fn per_plan(
    recommendation: &Recommendation,
    hours: Option<Decimal>,
    offers: &[Offer],
    disk_gb: u32,
) -> Vec<Vec<RankedOffer>> {
    let ranked = for_task(recommendation, hours, offers, disk_gb);
    let ids = catalog_ids(ranked.iter().map(|r| &r.offer));
    recommendation
        .candidates
        .iter()
        .map(|plan| {
            ranked
                .iter()
                .zip(&ids)
                .filter(|(r, id)| serves_as(&r.offer, **id, plan))
                .map(|(r, _)| r)
                .take(OFFERS_PER_PLAN)
                .cloned()
                .collect()
        })
        .collect()
}
