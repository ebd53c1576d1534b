use chrono::{DateTime, TimeZone, Utc};
use rust_decimal::Decimal;

use super::*;
use crate::billing::ledger::{add_instance, change_rules, NewInstance};
use crate::billing::BillingRules;
use crate::store::Store;

fn at(day: u32, hour: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, day, hour, 0, 0).unwrap()
}

fn price(text: &str) -> Decimal {
    text.parse().unwrap()
}

async fn rent(
    store: &Store,
    name: &str,
    gpu: &str,
    currency: &str,
    per_hour: &str,
    when: DateTime<Utc>,
) {
    let new = NewInstance {
        name: name.into(),
        provider: "autodl".into(),
        region: None,
        gpu_model: gpu.into(),
        currency: currency.into(),
        notes: None,
        planned_hours: None,
        budget: None,
        rules: BillingRules::simple(price(per_hour), 1),
    };
    add_instance(store, &new, when)
        .await
        .expect("a valid rental is recorded");
}

async fn read(store: &Store, currency: &str) -> Vec<EarlierPrice> {
    let mut conn = store.pool().acquire().await.expect("a connection");
    earlier_prices(&mut conn, currency)
        .await
        .expect("prices read back")
}

#[tokio::test]
async fn no_rentals_means_no_prices_so_the_recommender_ranks_by_fit_alone() {
    let store = Store::open_in_memory().await.unwrap();
    assert!(
        read(&store, "CNY").await.is_empty(),
        "an empty ledger must not invent prices"
    );
}

#[tokio::test]
async fn the_latest_price_paid_for_a_gpu_wins_over_older_rentals_and_older_rules() {
    let store = Store::open_in_memory().await.unwrap();
    rent(&store, "first-4090", "RTX 4090", "CNY", "1.98", at(1, 9)).await;
    rent(
        &store,
        "second-4090",
        "NVIDIA GeForce RTX 4090",
        "CNY",
        "2.20",
        at(5, 9),
    )
    .await;
    // The second rental's price later dropped: the rule change is the most recent price paid.
    let mut cheaper = BillingRules::simple(price("2.05"), 1);
    cheaper.data_disk_per_hour = price("0.01");
    change_rules(&store, "second-4090", &cheaper, at(6, 9))
        .await
        .unwrap();
    rent(
        &store,
        "a100-run",
        "A100 80GB PCIe",
        "CNY",
        "6.68",
        at(2, 9),
    )
    .await;

    let prices = read(&store, "CNY").await;
    let found: Vec<(&str, Decimal, &str)> = prices
        .iter()
        .map(|p| (p.gpu_id.as_str(), p.price_per_hour, p.instance.as_str()))
        .collect();
    assert_eq!(
        found,
        vec![
            ("a100-pcie-80gb", price("6.68"), "a100-run"),
            ("rtx-4090", price("2.05"), "second-4090"),
        ],
        "one price per catalog GPU, the most recently effective one, sorted by GPU id"
    );
    assert_eq!(
        prices[1].since,
        at(6, 9),
        "the price dates from the rule change"
    );
}

#[tokio::test]
async fn rentals_in_another_currency_are_left_out_because_prices_must_compare() {
    let store = Store::open_in_memory().await.unwrap();
    rent(&store, "runpod-4090", "RTX 4090", "USD", "0.69", at(1, 9)).await;
    rent(&store, "autodl-3090", "RTX 3090", "CNY", "1.32", at(2, 9)).await;

    let cny = read(&store, "cny").await;
    assert_eq!(cny.len(), 1, "only the CNY rental counts for CNY: {cny:?}");
    assert_eq!(cny[0].gpu_id, "rtx-3090");
    let usd = read(&store, "USD").await;
    assert_eq!(usd.len(), 1);
    assert_eq!(usd[0].price_per_hour, price("0.69"));
    assert_eq!(usd[0].to_price_entry().gpu, "RTX 4090");
}

#[tokio::test]
async fn a_gpu_the_catalog_does_not_know_is_skipped_not_an_error() {
    let store = Store::open_in_memory().await.unwrap();
    rent(
        &store,
        "mystery",
        "Moore Threads MTT S4000",
        "CNY",
        "3.00",
        at(1, 9),
    )
    .await;
    rent(&store, "known", "RTX 4090", "CNY", "2.00", at(1, 10)).await;
    let prices = read(&store, "CNY").await;
    assert_eq!(
        prices.iter().map(|p| p.gpu_id.as_str()).collect::<Vec<_>>(),
        vec!["rtx-4090"],
        "the recommender cannot place an unknown card, so its price is not offered"
    );
}
