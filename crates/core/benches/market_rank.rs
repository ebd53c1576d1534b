//! `make bench` (tests/bench/market.sh): ranking 20 000 market offers for a task (a 7B LoRA
//! fine-tune of 10 hours, every plan of the recommender), as Choose GPU and `recommend --market`
//! do. Printed next to a baseline run in the same process on the same offers: one plain sort of
//! them by price per hour, the least work any "cheapest first" list must do.

use std::hint::black_box;
use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use leasehold_core::account::Provider;
use leasehold_core::catalog::{recommend, EstimateRequest, RecommendRequest, Task};
use leasehold_core::market::rank::{self, DEFAULT_DISK_GB};
use leasehold_core::market::{Offer, PriceSource, Stock};
use rust_decimal::Decimal;

const OFFERS: usize = 20_000;
const ROUNDS: usize = 15;
const GPUS: [(&str, u32); 6] = [
    ("RTX 4090", 24),
    ("RTX 3090", 24),
    ("A100 SXM4 80GB", 80),
    ("H100 SXM", 80),
    ("RTX A6000", 48),
    ("L40S", 48),
];

/// 20 000 offers of six cards in 1, 2, 4 and 8, at scattered prices and stock (xorshift: the
/// same offers every run, no dependency).
fn offers() -> Vec<Offer> {
    let fetched_at = Utc.with_ymd_and_hms(2026, 12, 4, 12, 0, 0).unwrap();
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    (0..OFFERS)
        .map(|n| {
            let (gpu, vram) = GPUS[(next() % GPUS.len() as u64) as usize];
            let count = [1, 1, 2, 4, 8][(next() % 5) as usize];
            let per_gpu = Decimal::new(10 + (next() % 390) as i64, 2);
            Offer {
                provider: Provider::Vast,
                offer_id: n.to_string(),
                gpu: gpu.into(),
                count,
                vram_gb: vram,
                price_per_hour: per_gpu * Decimal::from(count),
                price_per_gpu_hour: per_gpu,
                currency: "USD".into(),
                storage_per_gb_month: Some(Decimal::new(15, 2)),
                region: Some("Texas, US".into()),
                stock: [Stock::High, Stock::Low, Stock::None][(next() % 3) as usize],
                interruptible: next() % 4 == 0,
                min_bid: None,
                reliability: None,
                fetched_at,
                source: PriceSource::Catalog,
            }
        })
        .collect()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let request = RecommendRequest {
        estimate: EstimateRequest {
            params_b: Some(7.0),
            task: Task::Lora,
            ..Default::default()
        },
        hours: Some(Decimal::from(10)),
        prices: Vec::new(),
    };
    let recommendation = recommend(&request).expect("a recommendation");
    let offers = offers();

    let ranked = median(
        (0..ROUNDS)
            .map(|_| {
                let start = Instant::now();
                black_box(rank::for_task(
                    &recommendation,
                    request.hours,
                    black_box(&offers),
                    DEFAULT_DISK_GB,
                ));
                start.elapsed()
            })
            .collect(),
    );
    let sorted = median(
        (0..ROUNDS)
            .map(|_| {
                let start = Instant::now();
                let mut copy = black_box(&offers).clone();
                copy.sort_by_key(|offer| offer.price_per_hour);
                black_box(copy);
                start.elapsed()
            })
            .collect(),
    );
    let shown = rank::for_task(&recommendation, request.hours, &offers, DEFAULT_DISK_GB).len();
    println!(
        "ranking {OFFERS} offers for a 10-hour 7B LoRA ({} plans, {shown} fitting offers): {:.1} ms; one sort by price: {:.1} ms; ratio {:.2}",
        recommendation.candidates.len(),
        ranked.as_secs_f64() * 1000.0,
        sorted.as_secs_f64() * 1000.0,
        ranked.as_secs_f64() / sorted.as_secs_f64()
    );
}
