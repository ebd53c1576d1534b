//! Provider accounts against the stand-ins of `tests/provider-standin` (the documented shapes of
//! RunPod v2, Vast.ai, Lambda and AutoDL Pro; every request checked): imports, state changes,
//! price and port changes, a vanishing instance, a scripted day whose bill is computed by hand,
//! failures that record nothing, hostile names, two accounts of one provider, power through the
//! API and reconcile.

use std::time::Duration;

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use leasehold_core::account::{
    self, reconcile, sync, AccountError, AccountRef, Backoff, Endpoints, PowerVerb, Provider,
};
use leasehold_core::billing::{ledger, InstanceState};
use leasehold_core::clock::FixedClock;
use leasehold_core::ssh::Secret;
use leasehold_core::stop::{power, StopError, StopWait};
use leasehold_core::store::Store;
use leasehold_testkit::provider_standin::ProviderStandin;
use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use serde_json::{json, Value};

fn at(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, h, m, 0).unwrap()
}

fn unix(t: DateTime<Utc>) -> i64 {
    t.timestamp()
}

fn quick() -> Backoff {
    Backoff {
        first: Duration::from_millis(20),
        attempts: 3,
    }
}

/// An account whose key lives in `var` (these tests use no keychain).
async fn add(
    store: &Store,
    provider: Provider,
    label: &str,
    var: &str,
    key: &str,
    base: &str,
) -> AccountRef {
    std::env::set_var(var, key);
    let account = AccountRef {
        provider,
        label: label.to_owned(),
    };
    account::add(
        store,
        &account,
        &Secret::new(key),
        Some(var),
        &Endpoints::all_at(base),
        at(6, 0),
    )
    .await
    .expect("the key is accepted");
    account
}

async fn sync_at(
    store: &Store,
    account: &AccountRef,
    base: &str,
    now: DateTime<Utc>,
) -> Result<sync::AccountSyncReport, AccountError> {
    sync::sync_account(store, account, &Endpoints::all_at(base), quick(), now).await
}

async fn ledger_rows(store: &Store) -> (i64, i64) {
    sqlx::query_as("SELECT (SELECT count(*) FROM instances), (SELECT count(*) FROM ledger_events)")
        .fetch_one(store.pool())
        .await
        .expect("counts")
}

fn no_violations(standin: &ProviderStandin) {
    let violations = standin.violations();
    assert!(violations.is_empty(), "{violations:?}");
}

#[tokio::test]
async fn a_scripted_runpod_day_is_billed_as_computed_by_hand() {
    let standin = ProviderStandin::start("runpod", "rp-key-1");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let account = add(
        &store,
        Provider::Runpod,
        "default",
        "LH_T_RP1",
        "rp-key-1",
        &base,
    )
    .await;
    standin.set_instances(json!([{
        "id": "p1", "name": "train", "state": "running", "price": "0.44",
        "created": unix(at(6, 55)), "started": unix(at(7, 0)), "ssh_port": 2201,
    }]));

    let first = sync_at(&store, &account, &base, at(8, 0)).await.unwrap();
    assert_eq!(first.imported, vec!["train"]);
    assert!(first.events.is_empty(), "{first:?}");
    let detail = ledger::show(&store, "train", at(8, 0)).await.unwrap();
    assert_eq!(detail.summary.state, Some(InstanceState::Running));
    assert_eq!(detail.summary.currency.code(), "USD");
    assert_eq!(
        detail.summary.gpu_model,
        leasehold_core::catalog::find_gpu("RTX 4090").unwrap().name,
        "the catalog's name, not RunPod's \"NVIDIA GeForce RTX 4090\""
    );
    assert_eq!(
        detail.events[0].at,
        at(6, 55),
        "created at the provider's time"
    );
    assert_eq!(
        detail.events[1].at,
        at(7, 0),
        "started at the provider's time"
    );
    let target = {
        let mut conn = store.pool().acquire().await.unwrap();
        leasehold_core::connect::load_target(&mut conn, "train")
            .await
            .unwrap()
            .expect("the SSH target came from the provider")
    };
    assert_eq!((target.host.as_str(), target.port), ("127.0.0.1", 2201));

    let again = sync_at(&store, &account, &base, at(8, 5)).await.unwrap();
    assert!(
        again.imported.is_empty() && again.events.is_empty(),
        "{again:?}"
    );
    assert_eq!(again.unchanged, 1);
    let rows_after_idle_sync = ledger_rows(&store).await;

    standin.patch("p1", json!({"state": "stopped"}));
    let stopped = sync_at(&store, &account, &base, at(10, 2)).await.unwrap();
    assert_eq!(stopped.events.len(), 1, "{stopped:?}");
    assert_eq!(
        (stopped.events[0].kind.as_str(), stopped.events[0].at),
        ("stopped", at(10, 2)),
        "no stop time from the provider: when the sync saw it"
    );
    assert_eq!(ledger_rows(&store).await.1, rows_after_idle_sync.1 + 1);

    standin.patch(
        "p1",
        json!({"state": "running", "started": unix(at(12, 0)), "price": "0.50", "ssh_port": 2202}),
    );
    let restarted = sync_at(&store, &account, &base, at(12, 1)).await.unwrap();
    let kinds: Vec<_> = restarted
        .events
        .iter()
        .map(|e| (e.kind.as_str(), e.at))
        .collect();
    assert_eq!(
        kinds,
        vec![("started", at(12, 0)), ("rule_changed", at(12, 1))],
        "the provider's start time, then the new price"
    );
    let target = {
        let mut conn = store.pool().acquire().await.unwrap();
        leasehold_core::connect::load_target(&mut conn, "train")
            .await
            .unwrap()
            .unwrap()
    };
    assert_eq!(target.port, 2202, "the new SSH port is saved");

    standin.patch("p1", json!({"state": "gone"}));
    let gone = sync_at(&store, &account, &base, at(14, 3)).await.unwrap();
    assert_eq!(gone.events[0].kind, "released");
    assert_eq!(gone.events[0].at, at(14, 3));

    // By hand, each billed stretch to the cent as the ledger shows it: 06:55–07:00 created
    // (RunPod bills from creation) and 07:00–10:02 running at $0.44/h, stopped until 12:00 at
    // nothing, 12:00–12:01 at $0.44/h, then 12:01–14:03 at the new $0.50/h.
    let stretch = |seconds: i64, rate: Decimal| {
        (Decimal::from(seconds) * rate / Decimal::from(3600)).round_dp(2)
    };
    let by_hand = stretch(300, dec!(0.44))
        + stretch(10_920, dec!(0.44))
        + stretch(60, dec!(0.44))
        + stretch(7_320, dec!(0.50));
    let bill = ledger::cost(&store, "train", at(20, 0)).await.unwrap();
    assert_eq!(by_hand, dec!(2.40));
    assert_eq!(bill.total, by_hand, "{bill:?}");
    no_violations(&standin);
}

#[tokio::test]
async fn a_sync_that_fails_midway_records_nothing_and_the_next_one_records_all() {
    let standin = ProviderStandin::start("vast", "vast-key");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let account = add(
        &store,
        Provider::Vast,
        "default",
        "LH_T_VAST1",
        "vast-key",
        &base,
    )
    .await;
    let instances: Vec<Value> = (1..=5)
        .map(|n| {
            json!({"id": 4000 + n, "name": format!("job {n}"), "state": "running",
                   "price": "0.8021", "created": unix(at(7, 0)), "ssh_port": 10_000 + n})
        })
        .collect();
    standin.set_instances(Value::Array(instances));
    standin.script(json!({"page_size": 2, "fail": [{"status": 500, "times": 10, "after": 2}]}));
    let err = sync_at(&store, &account, &base, at(8, 0))
        .await
        .expect_err("page 3 fails");
    assert!(
        matches!(err, AccountError::Refused { status: 500, .. }),
        "{err:?}"
    );
    assert_eq!(ledger_rows(&store).await, (0, 0), "nothing half-recorded");
    let listed = account::list(&store).await.unwrap();
    assert!(
        listed[0].last_error.is_some(),
        "the failure is shown on the account"
    );

    standin.script(json!({"fail": []}));
    let report = sync_at(&store, &account, &base, at(8, 1)).await.unwrap();
    assert_eq!(report.imported.len(), 5, "{report:?}");
    assert_eq!(report.requests, 3, "pages of two: 2 + 2 + 1");
    let pages: Vec<_> = standin
        .requests()
        .into_iter()
        .filter(|r| r["path"] == "/api/v1/instances/")
        .map(|r| r["query"].clone())
        .collect();
    assert!(
        pages.iter().any(|q| q.get("after_token").is_some()),
        "{pages:?}"
    );
    let again = sync_at(&store, &account, &base, at(8, 2)).await.unwrap();
    assert!(again.imported.is_empty() && again.events.is_empty());
    assert_eq!(again.unchanged, 5);
    assert!(account::list(&store).await.unwrap()[0].last_error.is_none());
    no_violations(&standin);
}

#[tokio::test]
async fn rate_limits_are_waited_out_and_a_refused_key_saves_nothing() {
    let standin = ProviderStandin::start("vast", "good-key");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let refused = account::add(
        &store,
        &AccountRef {
            provider: Provider::Vast,
            label: "default".into(),
        },
        &Secret::new("bad-key"),
        None,
        &Endpoints::all_at(&base),
        at(6, 0),
    )
    .await
    .expect_err("refused");
    match &refused {
        AccountError::KeyRefused { detail, .. } => assert_eq!(detail, "Invalid user key"),
        other => panic!("{other:?}"),
    }
    assert!(!refused.to_string().contains("bad-key"));
    assert!(account::list(&store).await.unwrap().is_empty());

    let account = add(
        &store,
        Provider::Vast,
        "default",
        "LH_T_VAST2",
        "good-key",
        &base,
    )
    .await;
    standin.set_instances(json!([{"id": 77, "state": "running", "price": "0.3"}]));
    standin.script(json!({"fail": [{"status": 429, "times": 2,
        "body": {"detail": "API requests too frequent endpoint threshold=2.0"}}]}));
    let report = sync_at(&store, &account, &base, at(8, 0)).await.unwrap();
    assert_eq!(report.imported, vec!["vast-77"], "no name: provider and id");
    let tries = standin
        .requests()
        .iter()
        .filter(|r| r["path"] == "/api/v1/instances/")
        .count();
    assert!(tries >= 4, "the check, two 429s, then the listing: {tries}");

    standin.script(json!({"fail": [{"status": 429, "times": 50}]}));
    let err = sync_at(&store, &account, &base, at(8, 5))
        .await
        .unwrap_err();
    assert!(matches!(err, AccountError::RateLimited { .. }), "{err:?}");
}

#[tokio::test]
async fn hostile_names_and_malformed_answers_crash_nothing() {
    let standin = ProviderStandin::start("runpod", "k");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let account = add(&store, Provider::Runpod, "default", "LH_T_RP2", "k", &base).await;
    standin.set_instances(json!([
        {"id": "q1", "name": "it's \"quoted\"\nand\r\nsplit", "state": "running", "price": "1"},
        {"id": "q2", "name": "x".repeat(10_000), "state": "running", "price": "1"},
        {"id": "q3", "name": "\u{202e}gnp.exe\u{200f}", "state": "running", "price": "1"},
        {"id": "../../etc", "name": "bent", "state": "running", "price": "1"},
        {"id": "q5", "name": "it's \"quoted\"\nand\r\nsplit", "state": "running", "price": "1"},
    ]));
    standin.script(json!({"malformed": 1}));
    let err = sync_at(&store, &account, &base, at(8, 0))
        .await
        .unwrap_err();
    assert!(matches!(err, AccountError::Malformed { .. }), "{err:?}");
    assert_eq!(ledger_rows(&store).await, (0, 0));

    let report = sync_at(&store, &account, &base, at(8, 1)).await.unwrap();
    assert_eq!(report.imported.len(), 4, "{report:?}");
    assert_eq!(report.imported[0], "it's \"quoted\" and split");
    assert_eq!(report.imported[1].chars().count(), 80);
    assert_eq!(report.imported[2], "gnp.exe", "no right-to-left override");
    assert_eq!(
        report.imported[3], "it's \"quoted\" and split (q5)",
        "a unique name"
    );
    assert!(
        report.warnings.iter().any(|w| w.contains("usable id")),
        "{:?}",
        report.warnings
    );
    no_violations(&standin);
}

#[tokio::test]
async fn two_accounts_of_one_provider_keep_to_their_own_instances() {
    let lab = ProviderStandin::start("runpod", "lab-key");
    let own = ProviderStandin::start("runpod", "own-key");
    let store = Store::open_in_memory().await.unwrap();
    let a = add(
        &store,
        Provider::Runpod,
        "lab",
        "LH_T_RP3",
        "lab-key",
        &lab.base(),
    )
    .await;
    let b = add(
        &store,
        Provider::Runpod,
        "own",
        "LH_T_RP4",
        "own-key",
        &own.base(),
    )
    .await;
    lab.set_instances(
        json!([{"id": "l1", "name": "lab box", "state": "running", "price": "2.49"}]),
    );
    own.set_instances(json!([{"id": "o1", "name": "my box", "state": "stopped", "price": "0.3"}]));
    assert_eq!(
        sync_at(&store, &a, &lab.base(), at(8, 0))
            .await
            .unwrap()
            .imported,
        vec!["lab box"]
    );
    // A stopped pod gives no price (`cost` 0): not recorded yet, and said so.
    let report = sync_at(&store, &b, &own.base(), at(8, 0)).await.unwrap();
    assert!(report.imported.is_empty());
    assert!(
        report.warnings[0].contains("no price"),
        "{:?}",
        report.warnings
    );
    own.patch("o1", json!({"state": "running"}));
    let report = sync_at(&store, &b, &own.base(), at(8, 30)).await.unwrap();
    assert_eq!(report.imported, vec!["my box"]);
    assert_eq!(
        sync_at(&store, &a, &lab.base(), at(9, 0))
            .await
            .unwrap()
            .unchanged,
        1,
        "the lab account never sees the other's pod"
    );
    let accounts = account::list(&store).await.unwrap();
    assert_eq!(accounts.len(), 2);
    assert!(accounts.iter().all(|a| a.instances == 1));
}

#[tokio::test]
async fn a_hand_recorded_instance_with_its_id_is_linked_not_copied() {
    let standin = ProviderStandin::start("runpod", "k2");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let new = leasehold_core::billing::NewInstance {
        name: "mine".into(),
        provider: "runpod".into(),
        region: None,
        gpu_model: "RTX 4090".into(),
        currency: "USD".into(),
        notes: None,
        planned_hours: None,
        budget: None,
        rules: leasehold_core::billing::BillingRules::simple(dec!(0.44), 1),
    };
    ledger::add_instance(&store, &new, at(7, 0)).await.unwrap();
    leasehold_core::stop::save_provider_id(&store, "mine", Provider::Runpod, "p9", at(7, 0))
        .await
        .unwrap();
    let account = add(&store, Provider::Runpod, "default", "LH_T_RP5", "k2", &base).await;
    standin.set_instances(
        json!([{"id": "p9", "name": "other name", "state": "running",
                                  "price": "0.44", "started": unix(at(7, 30))}]),
    );
    let report = sync_at(&store, &account, &base, at(8, 0)).await.unwrap();
    assert!(report.imported.is_empty(), "{report:?}");
    assert_eq!(report.events[0].kind, "started");
    assert_eq!(report.events[0].at, at(7, 30));
    let link = account::link_of(&store, "mine")
        .await
        .unwrap()
        .expect("linked");
    assert!(link.note.unwrap().contains("the ledger said created"));
    assert_eq!(ledger_rows(&store).await.0, 1, "no second copy");
}

#[tokio::test]
async fn power_goes_through_the_api_and_is_recorded_once_confirmed() {
    let standin = ProviderStandin::start("runpod", "k3");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let account = add(&store, Provider::Runpod, "default", "LH_T_RP6", "k3", &base).await;
    standin.set_instances(
        json!([{"id": "p2", "name": "gpu", "state": "running", "price": "0.44",
                                  "created": unix(at(7, 0))}]),
    );
    sync_at(&store, &account, &base, at(8, 0)).await.unwrap();
    standin.script(json!({"confirm_after": 2}));
    let wait = StopWait {
        limit: Duration::from_secs(10),
        every: Duration::from_millis(30),
        ..StopWait::default()
    };
    let endpoints = Endpoints::all_at(&base);
    let report = power(
        &store,
        "gpu",
        PowerVerb::Off,
        &endpoints,
        quick(),
        wait,
        &FixedClock::new(at(9, 0)),
    )
    .await
    .expect("stopped");
    assert_eq!(report.recorded_at, Some(at(9, 0)));
    let actions: Vec<_> = standin
        .requests()
        .into_iter()
        .filter(|r| r["method"] == "POST")
        .collect();
    assert_eq!(actions[0]["path"], "/v2/pods/p2/action");
    assert_eq!(actions[0]["body"], json!({"action": "stop"}));
    let state = ledger::show(&store, "gpu", at(9, 0))
        .await
        .unwrap()
        .summary
        .state;
    assert_eq!(state, Some(InstanceState::Stopped));

    // Off again: RunPod answers 409 and nothing changes.
    let err = power(
        &store,
        "gpu",
        PowerVerb::Off,
        &endpoints,
        quick(),
        wait,
        &FixedClock::new(at(9, 5)),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, StopError::Account(e) if matches!(**e, AccountError::ActionNotAllowed { .. })),
        "{err:?}"
    );

    // A release needs the release checklist first.
    let err = power(
        &store,
        "gpu",
        PowerVerb::Release,
        &endpoints,
        quick(),
        wait,
        &FixedClock::new(at(9, 10)),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, StopError::Account(e) if matches!(**e, AccountError::ReleaseBlocked { .. })),
        "{err:?}"
    );

    // A provider that never confirms: nothing recorded.
    standin.script(json!({"confirm_after": 1000}));
    let err = power(
        &store,
        "gpu",
        PowerVerb::On,
        &endpoints,
        quick(),
        StopWait {
            limit: Duration::from_millis(300),
            every: Duration::from_millis(50),
            ..StopWait::default()
        },
        &FixedClock::new(at(9, 20)),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, StopError::Account(e) if matches!(**e, AccountError::NotConfirmed { .. })),
        "{err:?}"
    );
    let state = ledger::show(&store, "gpu", at(9, 20))
        .await
        .unwrap()
        .summary
        .state;
    assert_eq!(state, Some(InstanceState::Stopped));
    no_violations(&standin);
}

#[tokio::test]
async fn lambda_offers_no_stop_and_reconcile_says_it_keeps_no_records() {
    let standin = ProviderStandin::start("lambda", "lk");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let account = add(
        &store,
        Provider::Lambda,
        "default",
        "LH_T_LAMBDA",
        "lk",
        &base,
    )
    .await;
    standin.set_instances(
        json!([{"id": "0920582c7ff041399e34823a0be62549", "name": "a100",
                                  "state": "running", "price": "1.29"}]),
    );
    let report = sync_at(&store, &account, &base, at(8, 0)).await.unwrap();
    assert_eq!(report.imported, vec!["a100"]);
    let detail = ledger::show(&store, "a100", at(8, 0)).await.unwrap();
    assert_eq!(
        detail.rules.price_per_gpu_hour,
        dec!(1.29),
        "cents per hour read as dollars"
    );
    let link = account::link_of(&store, "a100").await.unwrap().unwrap();
    assert_eq!(link.verbs, vec![PowerVerb::Release], "no stop on Lambda");
    let err = power(
        &store,
        "a100",
        PowerVerb::Off,
        &Endpoints::all_at(&base),
        quick(),
        StopWait::default(),
        &FixedClock::new(at(9, 0)),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, StopError::Account(e) if matches!(**e, AccountError::ActionUnsupported { .. })),
        "{err:?}"
    );
    let rows = reconcile::reconcile(
        &store,
        Some("a100"),
        NaiveDate::from_ymd_opt(2026, 12, 1).unwrap(),
        NaiveDate::from_ymd_opt(2026, 12, 1).unwrap(),
        &Endpoints::all_at(&base),
        quick(),
        at(12, 0),
    )
    .await
    .unwrap();
    assert_eq!(rows.len(), 1);
    assert!(rows[0].provider.is_none());
    assert!(
        rows[0].reason.contains("no billing records"),
        "{}",
        rows[0].reason
    );
}

#[tokio::test]
async fn autodl_uses_its_bare_token_reads_snapshots_only_when_needed_and_follows_the_port() {
    let standin = ProviderStandin::start("autodl", "adl-token");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let account = add(
        &store,
        Provider::Autodl,
        "default",
        "LH_T_ADL",
        "adl-token",
        &base,
    )
    .await;
    standin.set_instances(
        json!([{"id": "b7c2a1e0d9", "name": "lora", "state": "running",
        "price": "1.98", "ssh_host": "127.0.0.1", "ssh_port": 23001, "password": "pw-1"}]),
    );
    standin.script(json!({"accumulate": "100.5"}));
    let report = sync_at(&store, &account, &base, at(8, 0)).await.unwrap();
    assert_eq!(report.imported, vec!["lora"]);
    let detail = ledger::show(&store, "lora", at(8, 0)).await.unwrap();
    assert_eq!(
        detail.rules.price_per_gpu_hour,
        dec!(1.98),
        "1/1000 yuan read as yuan"
    );
    assert_eq!(detail.summary.currency.code(), "CNY");
    let before = standin.requests().len();
    sync_at(&store, &account, &base, at(8, 10)).await.unwrap();
    let asked: Vec<_> = standin.requests()[before..]
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        asked,
        vec![
            "/api/v1/dev/instance/pro/list",
            "/api/v1/dev/wallet/balance"
        ],
        "an unchanged instance costs no snapshot"
    );
    standin.patch("b7c2a1e0d9", json!({"state": "stopped"}));
    sync_at(&store, &account, &base, at(9, 0)).await.unwrap();
    standin.patch("b7c2a1e0d9", json!({"state": "running", "ssh_port": 23007}));
    let report = sync_at(&store, &account, &base, at(10, 0)).await.unwrap();
    assert_eq!(report.events[0].kind, "started");
    let target = {
        let mut conn = store.pool().acquire().await.unwrap();
        leasehold_core::connect::load_target(&mut conn, "lora")
            .await
            .unwrap()
            .unwrap()
    };
    assert_eq!(target.port, 23007, "AutoDL changes the port on power-on");
    assert!(standin.requests().iter().all(|r| r["key"] == "ok"));
    no_violations(&standin);
}

#[tokio::test]
async fn reconcile_puts_the_providers_charges_beside_the_ledger_and_suggests_the_rule() {
    let standin = ProviderStandin::start("runpod", "k4");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let account = add(&store, Provider::Runpod, "default", "LH_T_RP7", "k4", &base).await;
    standin.set_instances(
        json!([{"id": "p3", "name": "box", "state": "running", "price": "0.5",
        "created": unix(at(0, 0)), "started": unix(at(0, 0))}]),
    );
    sync_at(&store, &account, &base, at(0, 30)).await.unwrap();
    standin.patch("p3", json!({"state": "stopped"}));
    sync_at(&store, &account, &base, at(10, 0)).await.unwrap();
    // Ten hours running ($5.00) plus disk while stopped for the rest of the day.
    standin.script(json!({"charges": {"p3": {"2026-12-01": "5.70"}}}));
    let rows = reconcile::reconcile(
        &store,
        Some("box"),
        NaiveDate::from_ymd_opt(2026, 12, 1).unwrap(),
        NaiveDate::from_ymd_opt(2026, 12, 1).unwrap(),
        &Endpoints::all_at(&base),
        quick(),
        Utc.with_ymd_and_hms(2026, 12, 2, 0, 0, 0).unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(row.ledger, dec!(5));
    assert_eq!(row.provider, Some(dec!(5.7)));
    assert_eq!(row.difference, Some(dec!(0.7)));
    assert!(
        row.reason.contains("while the instance was stopped"),
        "{}",
        row.reason
    );
    let rules = row.suggested_rules.clone().expect("a rule explains it");
    assert_eq!(
        rules.stopped_billing,
        leasehold_core::billing::StoppedBilling::Storage { rate: dec!(0.05) },
        "0.70 over 14 stopped hours"
    );
    reconcile::apply(
        &store,
        "box",
        &rules,
        Utc.with_ymd_and_hms(2026, 12, 2, 0, 0, 0).unwrap(),
    )
    .await
    .unwrap();
    let billing = standin
        .requests()
        .into_iter()
        .find(|r| r["path"] == "/v2/billing/pods")
        .expect("asked for the pod's billing records");
    assert_eq!(billing["query"]["bucketSize"], "day");
    assert_eq!(billing["query"]["podId"], "p3");
    no_violations(&standin);
}

#[tokio::test]
async fn stop_now_goes_through_the_linked_account_and_a_hand_stop_is_checked_there() {
    use leasehold_core::stop::{self, StopRoute, StopVia};
    let standin = ProviderStandin::start("runpod", "k9");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let account = add(&store, Provider::Runpod, "lab", "LH_T_RP9", "k9", &base).await;
    standin.set_instances(
        json!([{"id": "p9", "name": "gpu", "state": "running", "price": "0.44",
                                  "created": unix(at(7, 0))}]),
    );
    sync_at(&store, &account, &base, at(8, 0)).await.unwrap();

    // No stop key and no id typed anywhere: the account is the route, and the look after a
    // hand-recorded stop asks it too.
    let plan = stop::plan(&store, "gpu", at(8, 30)).await.unwrap();
    assert_eq!(plan.route, StopRoute::Api);
    assert_eq!(plan.account, Some(account.clone()));
    assert_eq!(plan.check_by, Some(StopVia::Api));

    standin.script(json!({"confirm_after": 2}));
    let endpoints = Endpoints::all_at(&base);
    let wait = StopWait {
        limit: Duration::from_secs(10),
        every: Duration::from_millis(30),
        ..StopWait::default()
    };
    let report = stop::over_api(
        &store,
        "gpu",
        &endpoints,
        None,
        None,
        wait,
        &FixedClock::new(at(9, 0)),
    )
    .await
    .expect("stopped through the account");
    assert_eq!(report.via, StopVia::Api);
    assert_eq!(report.stopped_at, at(9, 0));
    let posts: Vec<_> = standin
        .requests()
        .into_iter()
        .filter(|r| r["method"] == "POST")
        .collect();
    assert_eq!(posts[0]["path"], "/v2/pods/p9/action");
    let state = |t| {
        let store = store.clone();
        async move { ledger::show(&store, "gpu", t).await.unwrap().summary.state }
    };
    assert_eq!(state(at(9, 0)).await, Some(InstanceState::Stopped));

    // Powered on again, then "stopped" by hand while RunPod still runs it: the look says so.
    power(
        &store,
        "gpu",
        PowerVerb::On,
        &endpoints,
        quick(),
        wait,
        &FixedClock::new(at(9, 10)),
    )
    .await
    .expect("on again");
    let clock = FixedClock::new(at(9, 20));
    let look = stop::look_for(&store, "gpu", &endpoints, at(9, 20))
        .await
        .unwrap();
    let hand = stop::record_by_hand(&store, "gpu", look.as_ref(), &clock)
        .await
        .unwrap();
    let check = hand.check.expect("looked through the account");
    assert_eq!(check.via, StopVia::Api);
    assert!(check.answered, "RunPod still reports it running");
    assert_eq!(
        state(at(9, 20)).await,
        Some(InstanceState::Stopped),
        "the ledger keeps the user's word"
    );
    no_violations(&standin);
}
