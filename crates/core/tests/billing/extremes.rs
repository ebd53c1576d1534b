//! No stored value can make a report panic (issue #13). Prices, GPU counts, fees, traffic and
//! times at the edges of what a decimal holds — values an older version accepted, or a hand edit
//! wrote — go through the engine and every report built on it, and through the store-backed
//! calls the app and the CLI make. Each either answers or fails with a coded error: the replay's
//! range checks, or `billing.amount_overflow` from the checked arithmetic.

use chrono::{DateTime, Duration, Utc};
use leasehold_core::billing::engine::compute;
use leasehold_core::billing::{
    ledger, BillingRules, BillingStart, CostReport, Currency, EventKind, Granularity, LedgerEvent,
    StoppedBilling,
};
use leasehold_core::store::ledger::{self as repo, EventRow, NewInstanceRow, RulesRow};
use leasehold_core::store::Store;
use leasehold_core::Coded;
use proptest::prelude::*;
use rust_decimal::Decimal;

use crate::common::*;

fn extreme_decimal() -> impl Strategy<Value = Decimal> {
    prop_oneof![
        Just(Decimal::MAX),
        Just(Decimal::ZERO),
        Just(Decimal::new(1, 28)),
        Just(d("100000000")),
        (any::<i64>(), 0u32..=28).prop_map(|(m, scale)| Decimal::new(m.saturating_abs(), scale)),
        (any::<u32>(), any::<u32>(), any::<u32>(), 0u32..=28)
            .prop_map(|(lo, mid, hi, scale)| Decimal::from_parts(lo, mid, hi, false, scale)),
    ]
}

fn extreme_rules() -> impl Strategy<Value = BillingRules> {
    (
        extreme_decimal(),
        prop_oneof![Just(1u32), Just(u32::MAX), any::<u32>()],
        prop::array::uniform6(extreme_decimal()),
        prop_oneof![Just(Granularity::Second), Just(Granularity::Hour)],
        prop::option::of(1u32..),
        any::<bool>(),
    )
        .prop_map(
            |(price, count, fees, granularity, wipe, from_creation)| BillingRules {
                price_per_gpu_hour: price,
                gpu_count: count,
                billing_starts: if from_creation {
                    BillingStart::Created
                } else {
                    BillingStart::Running
                },
                stopped_billing: StoppedBilling::Rate { rate: fees[0] },
                no_gpu_rate: Some(fees[1]),
                data_disk_per_hour: fees[2],
                snapshot_per_hour: fees[3],
                public_ip_per_hour: fees[4],
                traffic_per_gb: fees[5],
                granularity,
                wipe_after_stopped_days: wipe,
            },
        )
}

/// Seconds between events: from one second to thousands of years.
fn extreme_gap() -> impl Strategy<Value = i64> {
    prop_oneof![
        1i64..100_000,
        Just(3_600 * 24 * 365 * 5_000),
        1i64..100_000_000_000
    ]
}

/// A valid ledger (power changes alternate) with extreme values everywhere.
fn extreme_ledger() -> impl Strategy<Value = (Vec<LedgerEvent>, DateTime<Utc>)> {
    (
        extreme_rules(),
        prop::collection::vec((extreme_gap(), prop::option::of(extreme_decimal())), 0..6),
        extreme_gap(),
    )
        .prop_map(|(rules, steps, tail)| {
            let mut at = origin();
            let mut events = vec![created(at, &rules)];
            let mut running = false;
            for (gap, traffic) in steps {
                let Some(next) = at.checked_add_signed(Duration::seconds(gap)) else {
                    break;
                };
                at = next;
                let kind = match traffic {
                    Some(gb) => EventKind::TrafficRecorded(gb),
                    None => {
                        running = !running;
                        if running {
                            EventKind::Started
                        } else {
                            EventKind::Stopped
                        }
                    }
                };
                events.push(LedgerEvent::new(at, kind));
            }
            let now = at.checked_add_signed(Duration::seconds(tail)).unwrap_or(at);
            (events, now)
        })
}

/// What may refuse a stored ledger: the replay's range checks (the same limits as at input) or
/// an overflow the checked arithmetic caught.
const REFUSALS: [&str; 4] = [
    "billing.amount_overflow",
    "billing.too_large",
    "billing.invalid_price",
    "billing.invalid_input",
];

fn overflow_or_ok<T>(result: Result<T, leasehold_core::billing::BillingError>, what: &str) {
    if let Err(err) = result {
        assert!(
            REFUSALS.contains(&err.code()),
            "{what}: a coded refusal, got {err} ({})",
            err.code()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn extreme_values_never_panic_the_engine_or_the_report(
        (events, now) in extreme_ledger(),
        budget in prop::option::of(extreme_decimal().prop_filter("a budget is positive", |b| *b > Decimal::ZERO)),
    ) {
        let currency = Currency::parse("CNY").expect("known currency");
        match compute(&events, now) {
            Ok(costing) => overflow_or_ok(
                CostReport::new("extreme", &currency, &costing, budget, now),
                "the report",
            ),
            Err(err) => prop_assert!(REFUSALS.contains(&err.code()), "{} ({})", err, err.code()),
        }
    }
}

fn rules_row(rules: &BillingRules, at: DateTime<Utc>) -> RulesRow {
    RulesRow {
        id: 0,
        instance_id: 0,
        effective_from: at,
        price_per_gpu_hour: rules.price_per_gpu_hour.to_string(),
        gpu_count: i64::from(rules.gpu_count),
        billing_starts: rules.billing_starts.as_str().to_owned(),
        stopped_billing: rules.stopped_billing.kind().to_owned(),
        stopped_rate: rules.stopped_billing.rate().map(|r| r.to_string()),
        no_gpu_rate: rules.no_gpu_rate.map(|r| r.to_string()),
        data_disk_per_hour: rules.data_disk_per_hour.to_string(),
        snapshot_per_hour: rules.snapshot_per_hour.to_string(),
        public_ip_per_hour: rules.public_ip_per_hour.to_string(),
        traffic_per_gb: rules.traffic_per_gb.to_string(),
        granularity: rules.granularity.as_str().to_owned(),
        wipe_after_stopped_days: rules.wipe_after_stopped_days.map(i64::from),
    }
}

/// Write a ledger straight into the store, past every input check, as old data would be.
async fn store_raw(store: &Store, events: &[LedgerEvent]) {
    let mut tx = store.write().await.expect("write");
    let created_at = events[0].at;
    let id = repo::insert_instance(
        &mut tx,
        &NewInstanceRow {
            name: "extreme",
            provider: "custom",
            region: None,
            gpu_model: "RTX 4090",
            currency: "CNY",
            notes: None,
            planned_hours: Some(Decimal::MAX.to_string()),
            created_at,
        },
    )
    .await
    .expect("instance row");
    for event in events {
        let (kind, rules_id, traffic) = match &event.kind {
            EventKind::Created(rules) => {
                let rules_id = repo::insert_rules(&mut tx, id, &rules_row(rules, event.at))
                    .await
                    .expect("rules row");
                ("created", Some(rules_id), None)
            }
            EventKind::Started => ("started", None, None),
            EventKind::Stopped => ("stopped", None, None),
            EventKind::TrafficRecorded(gb) => ("traffic_recorded", None, Some(gb.to_string())),
            other => panic!("not generated: {other:?}"),
        };
        repo::insert_event(
            &mut tx,
            id,
            &EventRow {
                id: 0,
                instance_id: id,
                kind: kind.to_owned(),
                at: event.at,
                rules_id,
                traffic_gb: traffic,
            },
        )
        .await
        .expect("event row");
    }
    repo::set_budget(&mut tx, id, Some("0.0000000000000000000000000001"))
        .await
        .expect("budget row");
    tx.commit().await.expect("commit");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn extreme_stored_values_never_panic_a_report((events, now) in extreme_ledger()) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let store = Store::open_in_memory().await.expect("store");
            store_raw(&store, &events).await;
            overflow_or_ok(ledger::list(&store, now).await, "instance list");
            overflow_or_ok(ledger::cost(&store, "extreme", now).await, "cost");
            overflow_or_ok(ledger::show(&store, "extreme", now).await, "show");
            let later = now.checked_add_signed(Duration::hours(1)).unwrap_or(now);
            overflow_or_ok(ledger::forecast(&store, "extreme", now, later).await, "forecast");
        });
    }
}
