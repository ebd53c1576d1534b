//! The two one-click answers against a real (in-memory) store: the GPU count the monitor sees
//! written as a rule change, and a held price accepted from when it was first seen.

use chrono::{DateTime, Duration, TimeZone, Utc};
use rust_decimal_macros::dec;

use super::*;
use crate::billing::{ledger, BillingRules, NewInstance, PowerAction};
use crate::monitor::history::{self, GpuMinute};
use crate::store::{accounts, Store};

fn t(minutes: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 0).unwrap() + Duration::minutes(minutes)
}

async fn running(store: &Store, name: &str, currency: &str, price: rust_decimal::Decimal) {
    let new = NewInstance {
        name: name.into(),
        provider: "runpod".into(),
        region: None,
        gpu_model: "RTX 4090".into(),
        currency: currency.into(),
        notes: None,
        planned_hours: None,
        budget: None,
        rules: BillingRules::simple(price, 1),
    };
    ledger::add_instance(store, &new, t(0))
        .await
        .expect("recorded");
    ledger::record(store, name, PowerAction::Start, t(10))
        .await
        .expect("started");
}

#[tokio::test]
async fn the_gpu_count_the_monitor_sees_becomes_the_rules_from_now_on() {
    let store = Store::open_in_memory().await.expect("store");
    running(&store, "big", "CNY", dec!(2.50)).await;
    let refused = match_gpu_count(&store, "big", t(60)).await;
    assert!(
        matches!(refused, Err(StatusError::NoGpuCount { .. })),
        "nothing seen, nothing to update: {refused:?}"
    );
    let minutes: Vec<GpuMinute> = (0..8u32)
        .map(|gpu| GpuMinute {
            minute: t(58),
            gpu_index: gpu,
            samples: 60,
            utilization_avg: 90.0,
            utilization_max: 99,
            memory_used_max_mib: 1000,
            memory_total_mib: 24_576,
            power_avg_w: None,
        })
        .collect();
    history::record(&store, "big", &minutes)
        .await
        .expect("minutes");
    let status = match_gpu_count(&store, "big", t(60))
        .await
        .expect("updated");
    assert_eq!(
        status.cost_per_hour.to_string(),
        "20.00",
        "8 × 2.50 from now on"
    );
    assert!(
        !status.has_warning(codes::GPU_COUNT_DIFFERS),
        "the card goes"
    );
    let detail = ledger::show(&store, "big", t(60)).await.expect("show");
    assert_eq!(detail.rules.gpu_count, 8);
    assert_eq!(
        detail.events.last().map(|e| e.kind.as_str()),
        Some("rule_changed")
    );
    let again = match_gpu_count(&store, "big", t(61)).await;
    assert!(
        matches!(again, Err(StatusError::GpuCountMatches { gpus: 8, .. })),
        "{again:?}"
    );
}

#[tokio::test]
async fn a_held_price_is_accepted_from_when_it_was_first_seen_and_then_forgotten() {
    let store = Store::open_in_memory().await.expect("store");
    running(&store, "pod", "USD", dec!(0.50)).await;
    let mut conn = store.pool().acquire().await.expect("conn");
    let id = crate::store::ledger::find_instance(&mut conn, "pod")
        .await
        .expect("query")
        .expect("instance")
        .id;
    let account = accounts::insert_account(&mut conn, "runpod", "main", None, t(0))
        .await
        .expect("account");
    let link = accounts::NewLink {
        instance_id: id,
        account_id: account,
        remote_id: "pod7x",
        remote_state: "running",
        seen_at: t(40),
        imported: false,
        note: None,
    };
    accounts::insert_link(&mut conn, &link).await.expect("link");
    sqlx::query(
        "UPDATE account_instances SET held_price_per_hour = '500.00', held_gpu_count = 1,
             held_currency = 'USD', held_since = ? WHERE instance_id = ?",
    )
    .bind(t(30))
    .bind(id)
    .execute(&mut *conn)
    .await
    .expect("held");
    drop(conn);
    let held = for_instance(&store, "pod", t(60)).await.expect("status");
    assert!(held.has_warning(codes::PRICE_HELD));
    assert_eq!(held.cost_per_hour.to_string(), "0.50", "held, not applied");

    crate::account::held::accept_held_price(&store, "pod", t(60))
        .await
        .expect("accepted");
    let after = for_instance(&store, "pod", t(60)).await.expect("status");
    assert!(
        !after.has_warning(codes::PRICE_HELD),
        "nothing held any more"
    );
    assert_eq!(after.cost_per_hour.to_string(), "500.00");
    let rule_change = ledger::show(&store, "pod", t(60))
        .await
        .expect("show")
        .events
        .into_iter()
        .find(|e| e.kind == "rule_changed")
        .expect("a rule change");
    assert_eq!(rule_change.at, t(30), "dated when the sync first saw it");
    let twice = crate::account::held::accept_held_price(&store, "pod", t(61)).await;
    assert!(twice.is_err(), "nothing left to accept");
}

#[tokio::test]
async fn a_first_time_typo_stays_flagged_until_the_renter_says_the_price_is_right() {
    let store = Store::open_in_memory().await.expect("store");
    // Last month's 4090 at 2.20 yuan, then 360 yuan an hour for one 4090: a typo the card's own
    // price (paid for in about a day and a half) and the earlier rental both give away.
    let last_month = NewInstance {
        name: "fair".into(),
        provider: "autodl".into(),
        region: None,
        gpu_model: "RTX 4090".into(),
        currency: "CNY".into(),
        notes: None,
        planned_hours: None,
        budget: None,
        rules: BillingRules::simple(dec!(2.20), 1),
    };
    ledger::add_instance(&store, &last_month, t(-30 * 24 * 60))
        .await
        .expect("recorded");
    running(&store, "typo", "CNY", dec!(360)).await;
    let flagged = for_instance(&store, "typo", t(20)).await.expect("status");
    assert!(
        flagged.has_warning(codes::PRICE_UNUSUAL),
        "{:?}",
        flagged.warnings
    );
    let fair = for_instance(&store, "fair", t(20)).await.expect("status");
    assert!(
        !fair.has_warning(codes::PRICE_UNUSUAL),
        "{:?}",
        fair.warnings
    );
    // The list reads the same status.
    let listed = all(&store, t(20)).await.expect("all");
    assert!(listed
        .iter()
        .find(|s| s.instance == "typo")
        .is_some_and(|s| s.has_warning(codes::PRICE_UNUSUAL)));

    let acknowledged = acknowledge_price(&store, "typo", t(21)).await.expect("ack");
    assert!(!acknowledged.has_warning(codes::PRICE_UNUSUAL));
    assert!(!for_instance(&store, "typo", t(30))
        .await
        .expect("status")
        .has_warning(codes::PRICE_UNUSUAL));

    // A new price that looks wrong again is flagged again.
    let dearer = BillingRules::simple(dec!(3600), 1);
    ledger::change_rules(&store, "typo", &dearer, t(40))
        .await
        .expect("new price");
    assert!(for_instance(&store, "typo", t(50))
        .await
        .expect("status")
        .has_warning(codes::PRICE_UNUSUAL));
}

/// One kept RunPod catalog, fetched at `fetched_at`, offering each (card, dollars per GPU-hour).
async fn kept_market(
    store: &Store,
    offers: &[(&str, rust_decimal::Decimal)],
    fetched_at: DateTime<Utc>,
) {
    use crate::market::{Offer, PriceSource, Stock};
    let offers: Vec<Offer> = offers
        .iter()
        .enumerate()
        .map(|(i, (gpu, price))| Offer {
            provider: crate::account::Provider::Runpod,
            offer_id: format!("offer-{i}"),
            gpu: (*gpu).into(),
            count: 1,
            vram_gb: 80,
            price_per_hour: *price,
            price_per_gpu_hour: *price,
            currency: "USD".into(),
            storage_per_gb_month: None,
            region: None,
            stock: Stock::High,
            interruptible: false,
            min_bid: None,
            reliability: None,
            fetched_at,
            source: PriceSource::Catalog,
        })
        .collect();
    let mut conn = store.pool().acquire().await.expect("conn");
    crate::store::market::save_offers(
        &mut conn,
        "runpod",
        serde_json::to_string(&offers).expect("json"),
        fetched_at,
    )
    .await
    .expect("kept");
}

#[tokio::test]
async fn a_first_rental_of_a_card_with_no_launch_price_is_held_against_the_live_market() {
    let store = Store::open_in_memory().await.expect("store");
    for (name, price) in [("typo", dec!(23.90)), ("fair", dec!(2.69))] {
        let new = NewInstance {
            name: name.into(),
            provider: "runpod".into(),
            region: None,
            gpu_model: "H100 80GB".into(),
            currency: "USD".into(),
            notes: None,
            planned_hours: None,
            budget: None,
            rules: BillingRules::simple(price, 1),
        };
        ledger::add_instance(&store, &new, t(0))
            .await
            .expect("recorded");
    }
    // No history and no launch price for an H100: without the market, nothing questions it.
    assert!(!for_instance(&store, "typo", t(5))
        .await
        .expect("status")
        .has_warning(codes::PRICE_UNUSUAL));

    kept_market(
        &store,
        &[("H100 80GB HBM3", dec!(2.39)), ("H100 SXM", dec!(2.99))],
        t(1),
    )
    .await;
    let flagged = for_instance(&store, "typo", t(5)).await.expect("status");
    let warning = flagged
        .warnings
        .iter()
        .find(|w| w.code == codes::PRICE_UNUSUAL)
        .unwrap_or_else(|| panic!("flagged: {:?}", flagged.warnings));
    let param = |key: &str| {
        warning
            .params
            .get(key)
            .cloned()
            .unwrap_or_else(|| panic!("{key} in {:?}", warning.params))
    };
    assert_eq!(param("kind"), "far_from_market");
    assert_eq!(
        (param("low"), param("high")),
        ("2.39".into(), "2.99".into())
    );
    assert_eq!(param("times"), "7.99");
    assert!(!for_instance(&store, "fair", t(5))
        .await
        .expect("status")
        .has_warning(codes::PRICE_UNUSUAL));

    // A catalog kept from over a week ago is no longer what the market asks.
    kept_market(&store, &[("H100 80GB HBM3", dec!(2.39))], t(1)).await;
    let later = t(1) + crate::market::snapshot::LIVE_FOR + Duration::minutes(1);
    assert!(!for_instance(&store, "typo", later)
        .await
        .expect("status")
        .has_warning(codes::PRICE_UNUSUAL));
}
