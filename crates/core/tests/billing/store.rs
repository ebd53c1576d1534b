//! The ledger API on real databases: a fresh one per test, the clock passed in.

use leasehold_core::billing::{
    ledger, BillingRules, InstanceState, NewInstance, PowerAction, StoppedBilling,
};
use leasehold_core::store::Store;
use leasehold_core::Coded;
use sqlx::Row;

use crate::common::*;

fn new_instance(name: &str, price: &str) -> NewInstance {
    NewInstance {
        name: name.into(),
        provider: "custom".into(),
        region: Some("beijing-a".into()),
        gpu_model: "RTX 4090".into(),
        currency: "CNY".into(),
        notes: None,
        planned_hours: Some(d("10")),
        budget: None,
        rules: rules(price),
    }
}

async fn fresh() -> Store {
    Store::open_in_memory().await.expect("in-memory store")
}

async fn row_counts(store: &Store) -> (i64, i64, i64) {
    let row = sqlx::query(
        "SELECT (SELECT count(*) FROM instances), (SELECT count(*) FROM ledger_events),
                (SELECT count(*) FROM billing_rules)",
    )
    .fetch_one(store.pool())
    .await
    .expect("count rows");
    (row.get(0), row.get(1), row.get(2))
}

#[tokio::test]
async fn a_recorded_rental_is_billed_from_its_events() {
    let store = fresh().await;
    ledger::add_instance(&store, &new_instance("train-7b", "2.50"), h(0))
        .await
        .expect("add");
    ledger::record(&store, "train-7b", PowerAction::Start, h(0))
        .await
        .expect("start");
    let stopped = ledger::record(&store, "train-7b", PowerAction::Stop, h(10))
        .await
        .expect("stop");
    assert_eq!(stopped.state, Some(InstanceState::Stopped));
    assert_eq!(stopped.running_seconds, 36_000);
    let report = ledger::cost(&store, "train-7b", h(30)).await.expect("cost");
    assert_eq!(report.total.to_string(), "25.00");
    assert_eq!(report.currency.code(), "CNY");
    assert_eq!(report.intervals.len(), 2, "running, then stopped");
    let detail = ledger::show(&store, "train-7b", h(30)).await.expect("show");
    let kinds: Vec<_> = detail.events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["created", "started", "stopped"]);
    assert_eq!(
        detail.summary.planned_hours.map(|p| p.to_string()),
        Some("10".into())
    );
}

#[tokio::test]
async fn a_file_database_is_created_with_its_folder_and_survives_reopening() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("nested/folder/ledger.sqlite3");
    {
        let store = Store::open(&path).await.expect("open creates the folders");
        ledger::add_instance(&store, &new_instance("a100", "8"), h(0))
            .await
            .expect("add");
        store.close().await;
    }
    let store = Store::open(&path).await.expect("reopen");
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(store.pool())
        .await
        .expect("journal mode");
    assert_eq!(mode, "wal", "WAL lets the app read while the CLI writes");
    let fk: i64 = sqlx::query_scalar("PRAGMA foreign_keys")
        .fetch_one(store.pool())
        .await
        .expect("foreign keys");
    assert_eq!(fk, 1);
    let all = ledger::list(&store, h(2)).await.expect("list");
    assert_eq!(all.len(), 1);
    assert_eq!(
        all[0].total.to_string(),
        "16.00",
        "billed from creation: 2 h × 8"
    );
}

#[tokio::test]
async fn refused_writes_leave_the_database_untouched() {
    let store = fresh().await;
    ledger::add_instance(&store, &new_instance("box", "2"), h(0))
        .await
        .expect("add");
    ledger::record(&store, "box", PowerAction::Start, h(5))
        .await
        .expect("start");
    let before = row_counts(&store).await;

    let mut unknown_currency = new_instance("other", "2");
    unknown_currency.currency = "CYN".into();
    let mut bad_name = new_instance("", "2");
    bad_name.name = "  ".into();
    let attempts = [
        (
            ledger::add_instance(&store, &new_instance("box", "2"), h(6))
                .await
                .err(),
            "billing.duplicate_name",
        ),
        (
            ledger::add_instance(&store, &new_instance("zero", "0"), h(6))
                .await
                .err(),
            "billing.invalid_price",
        ),
        (
            ledger::add_instance(&store, &new_instance("neg", "-1"), h(6))
                .await
                .err(),
            "billing.invalid_price",
        ),
        (
            ledger::add_instance(&store, &unknown_currency, h(6))
                .await
                .err(),
            "billing.unknown_currency",
        ),
        (
            ledger::add_instance(&store, &bad_name, h(6)).await.err(),
            "billing.invalid_input",
        ),
        (
            ledger::record(&store, "box", PowerAction::Stop, h(4))
                .await
                .err(),
            "billing.out_of_order",
        ),
        (
            ledger::record(&store, "box", PowerAction::Start, h(6))
                .await
                .err(),
            "billing.invalid_transition",
        ),
        (
            ledger::record(&store, "ghost", PowerAction::Release, h(6))
                .await
                .err(),
            "billing.unknown_instance",
        ),
        (
            ledger::record(&store, "box", PowerAction::NoGpu, h(6))
                .await
                .err(),
            "billing.no_gpu_unavailable",
        ),
        (
            ledger::record_traffic(&store, "box", d("-3"), h(6))
                .await
                .err(),
            "billing.negative_amount",
        ),
        (
            ledger::change_rules(&store, "box", &rules("0"), h(6))
                .await
                .err(),
            "billing.invalid_price",
        ),
        (
            ledger::set_budget(&store, "box", Some(d("-5")), h(6))
                .await
                .err(),
            "billing.invalid_input",
        ),
    ];
    for (err, code) in attempts {
        let err = err.unwrap_or_else(|| panic!("{code}: the write must be refused"));
        assert_eq!(err.code(), code, "{err}");
        assert!(err.is_bad_input(), "{code} is bad input (exit 2)");
    }
    assert_eq!(
        row_counts(&store).await,
        before,
        "refused writes wrote nothing"
    );
}

#[tokio::test]
async fn nothing_is_recorded_after_release_or_before_creation() {
    let store = fresh().await;
    ledger::add_instance(&store, &new_instance("box", "2"), h(10))
        .await
        .expect("add");
    let err = ledger::record(&store, "box", PowerAction::Release, h(9))
        .await
        .expect_err("release before creation");
    assert_eq!(err.code(), "billing.before_creation");
    let released = ledger::record(&store, "box", PowerAction::Release, h(12))
        .await
        .expect("release");
    assert_eq!(released.total.to_string(), "4.00");
    let err = ledger::record(&store, "box", PowerAction::Start, h(13))
        .await
        .expect_err("after release");
    assert_eq!(err.code(), "billing.after_release");
    let later = ledger::cost(&store, "box", h(1000)).await.expect("cost");
    assert_eq!(
        later.total.to_string(),
        "4.00",
        "the final bill does not grow"
    );
}

#[tokio::test]
async fn rule_changes_are_versioned_and_priced_from_their_time() {
    let store = fresh().await;
    ledger::add_instance(&store, &new_instance("box", "2"), h(0))
        .await
        .expect("add");
    let mut cheaper = rules("1");
    cheaper.stopped_billing = StoppedBilling::Storage { rate: d("0.1") };
    ledger::change_rules(&store, "box", &cheaper, h(3))
        .await
        .expect("change");
    ledger::record(&store, "box", PowerAction::Stop, h(5))
        .await
        .expect("stop");
    let report = ledger::cost(&store, "box", h(15)).await.expect("cost");
    assert_eq!(
        report.total.to_string(),
        "9.00",
        "3 h × 2 + 2 h × 1 + 10 h × 0.1"
    );
    assert_eq!(report.breakdown.storage.to_string(), "1.00");
    let detail = ledger::show(&store, "box", h(15)).await.expect("show");
    assert_eq!(
        detail.rules, cheaper,
        "the rules in effect now are the changed ones"
    );
    let versions: i64 = sqlx::query_scalar("SELECT count(*) FROM billing_rules")
        .fetch_one(store.pool())
        .await
        .expect("count");
    assert_eq!(versions, 2, "the old version is kept");
}

#[tokio::test]
async fn budgets_warn_and_forecasts_look_ahead() {
    let store = fresh().await;
    let mut new = new_instance("box", "2");
    new.budget = Some(d("20"));
    ledger::add_instance(&store, &new, h(0)).await.expect("add");
    let summary = ledger::list(&store, h(8)).await.expect("list").remove(0);
    let budget = summary.budget.expect("budget set");
    assert_eq!(budget.percent_used.to_string(), "80.0");
    assert_eq!(budget.threshold_reached, Some(80));
    assert_eq!(budget.exhausted_at, Some(h(10)));

    let forecast = ledger::forecast(&store, "box", h(8), h(12))
        .await
        .expect("forecast");
    assert_eq!(forecast.total_now.to_string(), "16.00");
    assert_eq!(forecast.total_at_until.to_string(), "24.00");
    assert_eq!(forecast.additional.to_string(), "8.00");
    assert_eq!(
        forecast.budget_at_until.and_then(|b| b.threshold_reached),
        Some(100)
    );
    let err = ledger::forecast(&store, "box", h(8), h(7))
        .await
        .expect_err("past");
    assert_eq!(err.code(), "billing.forecast_in_past");

    let cleared = ledger::set_budget(&store, "box", None, h(8))
        .await
        .expect("clear");
    assert!(cleared.budget.is_none());
}

#[tokio::test]
async fn traffic_and_no_gpu_mode_are_recorded_and_billed() {
    let store = fresh().await;
    let mut new = new_instance("box", "2");
    new.rules = BillingRules {
        no_gpu_rate: Some(d("0.1")),
        traffic_per_gb: d("0.5"),
        ..rules("2")
    };
    ledger::add_instance(&store, &new, h(0)).await.expect("add");
    ledger::record(&store, "box", PowerAction::Stop, h(1))
        .await
        .expect("stop");
    ledger::record(&store, "box", PowerAction::NoGpu, h(2))
        .await
        .expect("no gpu");
    ledger::record_traffic(&store, "box", d("10"), h(3))
        .await
        .expect("traffic");
    let report = ledger::cost(&store, "box", h(12)).await.expect("cost");
    assert_eq!(report.state, Some(InstanceState::NoGpu));
    assert_eq!(report.breakdown.no_gpu.to_string(), "1.00");
    assert_eq!(report.breakdown.traffic.to_string(), "5.00");
    assert_eq!(report.total.to_string(), "8.00", "2 + 1 + 5");
}

#[tokio::test]
async fn the_recommender_prices_a_gpu_with_what_its_newest_rental_cost() {
    let store = fresh().await;
    ledger::add_instance(&store, &new_instance("first-4090", "2.50"), h(0))
        .await
        .expect("records");
    ledger::add_instance(&store, &new_instance("second-4090", "1.98"), h(5))
        .await
        .expect("records");
    let prices = leasehold_core::catalog::earlier_prices(&store, h(6))
        .await
        .expect("reads the ledger");
    assert_eq!(prices.len(), 1, "one price per GPU: {prices:?}");
    assert_eq!(
        prices[0].price_per_hour,
        d("1.98"),
        "the newest rental's price wins over an older one"
    );
    assert_eq!(prices[0].currency, "CNY");
    assert_eq!(
        prices[0].origin,
        leasehold_core::catalog::PriceOrigin::EarlierRental
    );
}

#[tokio::test]
async fn billing_now_lists_what_costs_money_and_sums_burn_per_currency() {
    let store = fresh().await;
    for (name, price) in [("a", "2.50"), ("b", "1.25"), ("gone", "9")] {
        ledger::add_instance(&store, &new_instance(name, price), h(0))
            .await
            .expect("add");
        ledger::record(&store, name, PowerAction::Start, h(0))
            .await
            .expect("start");
    }
    ledger::record(&store, "gone", PowerAction::Release, h(1))
        .await
        .expect("release");
    let summaries = ledger::list(&store, h(2)).await.expect("list");
    let (billing, totals) = leasehold_core::billing::report::billing_now(&summaries);
    let names: Vec<&str> = billing.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(totals.len(), 1);
    assert_eq!(totals["CNY"], d("3.75"));
}
