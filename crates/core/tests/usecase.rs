//! The use-case layer decides once what the app and the CLI used to decide each on its own:
//! a release checklist for an instance that cannot be reached, however it was to be reached, and
//! an account label judged by `account::add`; and it checks what a form sends before it keeps
//! anything or connects (watchdog settings, a budget, a project, a webhook).

use std::time::Duration;

use chrono::{TimeZone, Utc};
use leasehold_core::account::{AccountRef, Provider};
use leasehold_core::backup::ScanOptions;
use leasehold_core::billing::{ledger, BillingRules, NewInstance};
use leasehold_core::ssh::{ConnectRequest, Secret};
use leasehold_core::store::Store;
use leasehold_core::usecase::{self, backup::Reach, Handles};
use leasehold_core::watchdog::WatchdogRequest;
use leasehold_core::webhook;
use leasehold_core::{Coded, FixedClock};
use rust_decimal_macros::dec;

fn clock() -> FixedClock {
    FixedClock::new(Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap())
}

async fn store_with_box() -> Store {
    let store = Store::open_in_memory().await.unwrap();
    let new = NewInstance {
        name: "box".into(),
        provider: "runpod".into(),
        region: None,
        gpu_model: "RTX 4090".into(),
        currency: "USD".into(),
        notes: None,
        planned_hours: None,
        budget: None,
        rules: BillingRules::simple(dec!(0.44), 1),
    };
    let at = Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap();
    ledger::add_instance(&store, &new, at).await.unwrap();
    store
}

/// A port nothing listens on: the connection is refused at once.
fn nobody_home(dir: &std::path::Path) -> ConnectRequest {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    ConnectRequest {
        ssh_command: format!("ssh -p {port} root@127.0.0.1"),
        known_hosts: Some(dir.join("known_hosts")),
        connect_timeout: Some(Duration::from_secs(3)),
        ..ConnectRequest::default()
    }
}

#[tokio::test]
async fn an_unreached_instance_gets_its_checklist_live_or_dialled() {
    let store = store_with_box().await;
    let (handles, clock) = (Handles::default(), clock());
    let context = handles.context(&store, &clock);
    let options = ScanOptions::default();
    // No saved target: the app's live connection cannot be made.
    let live = usecase::backup::release_check(&context, "box", &options, Reach::Live)
        .await
        .unwrap();
    assert!(live.blocked, "{live:?}");
    let dir = tempfile::tempdir().unwrap();
    let request = nobody_home(dir.path());
    let dialled = usecase::backup::release_check(&context, "box", &options, Reach::Dial(&request))
        .await
        .unwrap();
    assert!(dialled.blocked, "{dialled:?}");
    assert_eq!(
        live.checks.iter().map(|c| &c.code).collect::<Vec<_>>(),
        dialled.checks.iter().map(|c| &c.code).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn a_connection_described_wrongly_or_an_unknown_name_is_bad_input() {
    let store = store_with_box().await;
    let (handles, clock) = (Handles::default(), clock());
    let context = handles.context(&store, &clock);
    let options = ScanOptions::default();
    let wrong = ConnectRequest {
        ssh_command: "scp file host:".into(),
        ..ConnectRequest::default()
    };
    let err = usecase::backup::release_check(&context, "box", &options, Reach::Dial(&wrong))
        .await
        .unwrap_err();
    assert!(err.is_bad_input(), "{err} [{}]", err.code());
    let dir = tempfile::tempdir().unwrap();
    let request = nobody_home(dir.path());
    let err = usecase::backup::release_check(&context, "nobody", &options, Reach::Dial(&request))
        .await
        .unwrap_err();
    assert!(err.is_bad_input(), "{err} [{}]", err.code());
}

#[tokio::test]
async fn the_label_is_judged_by_add_before_any_request() {
    let store = Store::open_in_memory().await.unwrap();
    let (handles, clock) = (Handles::default(), clock());
    let context = handles.context(&store, &clock);
    let account = AccountRef {
        provider: Provider::Runpod,
        label: "two words".into(),
    };
    let err = usecase::account::add(&context, &account, &Secret::new("k"), None)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "account.bad_label");
    assert!(err.is_bad_input());
}

#[tokio::test]
async fn watchdog_settings_are_checked_before_anything_connects() {
    let store = store_with_box().await;
    let (handles, clock) = (Handles::default(), clock());
    let context = handles.context(&store, &clock);
    let defaults = usecase::watchdog::defaults(&context, "box").await.unwrap();
    assert!(!defaults.power_off.is_empty());
    // "box" has no saved connection: a good request gets as far as dialling and fails there…
    let good = WatchdogRequest::default();
    let err = usecase::watchdog::install(&context, "box", &good)
        .await
        .unwrap_err();
    assert!(
        !err.code().starts_with("watchdog."),
        "{err} [{}]",
        err.code()
    );
    // …a bad one is refused first.
    let bad = WatchdogRequest {
        idle: Some("whenever".into()),
        ..WatchdogRequest::default()
    };
    let err = usecase::watchdog::install(&context, "box", &bad)
        .await
        .unwrap_err();
    assert!(
        err.code().starts_with("watchdog."),
        "{err} [{}]",
        err.code()
    );
    assert!(err.is_bad_input());
}

#[tokio::test]
async fn the_bid_cap_leaves_the_rest_of_the_policy_alone() {
    let store = store_with_box().await;
    let (handles, clock) = (Handles::default(), clock());
    let context = handles.context(&store, &clock);
    let form = usecase::keeper::PolicyForm {
        stop_after_idle_minutes: Some(30),
        release_after_stopped_days: None,
        auto_release: false,
        off: false,
    };
    usecase::keeper::set_policy(&context, Some("box"), form)
        .await
        .unwrap();
    let policy = usecase::keeper::set_bid_cap(&context, "box", dec!(0.35))
        .await
        .unwrap();
    assert_eq!(policy.bid_cap, Some(dec!(0.35)));
    assert_eq!(policy.stop_after_idle_s, Some(30 * 60));
}

#[tokio::test]
async fn a_typed_budget_and_a_project_are_judged_before_they_are_kept() {
    let store = store_with_box().await;
    let (handles, clock) = (Handles::default(), clock());
    let context = handles.context(&store, &clock);
    let err = usecase::team::set_budget(&context, "CNY", "a lot")
        .await
        .unwrap_err();
    assert!(err.is_bad_input(), "{err} [{}]", err.code());
    assert_eq!(err.field(), Some("amount"));
    let err = usecase::team::set_project(&context, "nobody", Some("vision"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "billing.unknown_instance");
    let saved = usecase::team::set_project(&context, "box", Some("vision"))
        .await
        .unwrap();
    assert_eq!(saved.as_deref(), Some("vision"));
}

#[tokio::test]
async fn a_webhook_of_an_unknown_kind_is_not_saved() {
    let store = Store::open_in_memory().await.unwrap();
    let (handles, clock) = (Handles::default(), clock());
    let context = handles.context(&store, &clock);
    let url = Secret::new("https://example.com/hook");
    let err = usecase::webhook::add(&context, "carrier-pigeon", "ops", &url, None)
        .await
        .unwrap_err();
    assert!(err.is_bad_input(), "{err} [{}]", err.code());
    assert!(webhook::saved::list(&store).await.unwrap().is_empty());
    let err = usecase::webhook::test(&context, 7).await.unwrap_err();
    assert!(err.code().starts_with("webhook."), "{err} [{}]", err.code());
}

#[tokio::test]
async fn a_verify_run_that_was_never_kept_is_not_found() {
    let store = store_with_box().await;
    let (handles, clock) = (Handles::default(), clock());
    let context = handles.context(&store, &clock);
    let err = usecase::verify::load_run(&context, 41).await.unwrap_err();
    assert!(err.code().starts_with("verify."), "{err} [{}]", err.code());
}
