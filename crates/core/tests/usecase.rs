//! The use-case layer decides once what the app and the CLI used to decide each on its own:
//! a release checklist for an instance that cannot be reached, however it was to be reached, and
//! an account label judged by `account::add`.

use std::time::Duration;

use chrono::{TimeZone, Utc};
use leasehold_core::account::{AccountRef, Provider};
use leasehold_core::backup::ScanOptions;
use leasehold_core::billing::{ledger, BillingRules, NewInstance};
use leasehold_core::ssh::{ConnectRequest, Secret};
use leasehold_core::store::Store;
use leasehold_core::usecase::{self, backup::Reach, Handles};
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
