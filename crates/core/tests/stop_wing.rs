//! The Stop wing's provider route against the provider stand-ins (`tests/provider-standin`):
//! one confirmation loop that believes only an answer about the id it asked about (a look at pod
//! A answered with pod B's `EXITED` records nothing, through a linked account and through a
//! saved id and key alike), and one resolve of the instance per request on every route.

use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use leasehold_core::account::{self, AccountRef, Backoff, Endpoints, PowerVerb, Provider};
use leasehold_core::billing::{ledger, BillingRules, InstanceState, NewInstance, PowerAction};
use leasehold_core::clock::FixedClock;
use leasehold_core::ssh::Secret;
use leasehold_core::stop::{self, StopError, StopWait};
use leasehold_core::store::Store;
use leasehold_core::Coded;
use leasehold_testkit::provider_standin::ProviderStandin;
use rust_decimal_macros::dec;
use serde_json::json;

fn at(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, h, m, 0).unwrap()
}

fn quick() -> Backoff {
    Backoff {
        first: Duration::from_millis(20),
        attempts: 3,
    }
}

fn short(limit_ms: u64) -> StopWait {
    StopWait {
        limit: Duration::from_millis(limit_ms),
        every: Duration::from_millis(30),
        ..StopWait::default()
    }
}

async fn state(store: &Store, name: &str) -> Option<InstanceState> {
    ledger::show(store, name, at(12, 0))
        .await
        .unwrap()
        .summary
        .state
}

/// A RunPod account (key in `var`, no keychain here) listing pod A running and pod B stopped,
/// synced so both are linked.
async fn two_linked_pods(standin: &ProviderStandin, var: &str, key: &str) -> Store {
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    std::env::set_var(var, key);
    let account = AccountRef {
        provider: Provider::Runpod,
        label: "default".into(),
    };
    account::add(
        &store,
        &account,
        &Secret::new(key),
        Some(var),
        &Endpoints::all_at(&base),
        at(6, 0),
    )
    .await
    .expect("the key is accepted");
    standin.set_instances(json!([
        {"id": "pod-a", "name": "gpu-a", "state": "running", "price": "0.44",
         "created": at(7, 0).timestamp()},
        {"id": "pod-b", "name": "gpu-b", "state": "stopped", "price": "0.44",
         "created": at(7, 0).timestamp()},
    ]));
    account::sync::sync_account(
        &store,
        &account,
        &Endpoints::all_at(&base),
        quick(),
        at(8, 0),
    )
    .await
    .expect("synced");
    store
}

#[tokio::test]
async fn pod_bs_exited_never_confirms_the_stop_of_pod_a() {
    let standin = ProviderStandin::start("runpod", "k-other");
    let store = two_linked_pods(&standin, "LH_T_SW_RP1", "k-other").await;
    let endpoints = Endpoints::all_at(&standin.base());
    // Pod A keeps running; every direct look at it answers with pod B (EXITED).
    standin.script(json!({"confirm_after": 1000, "answer_as": {"pod-a": "pod-b"}}));

    let before = stop::resolves_on_this_thread();
    let err = stop::over_api(
        &store,
        "gpu-a",
        &endpoints,
        None,
        None,
        short(400),
        &FixedClock::new(at(9, 0)),
    )
    .await
    .expect_err("another pod's EXITED is no confirmation");
    assert!(
        matches!(&err, StopError::OtherInstance { id, other, .. } if id == "pod-a" && other == "pod-b"),
        "{err:?}"
    );
    assert_eq!(err.code(), "stop.other_instance");
    assert_eq!(stop::resolves_on_this_thread() - before, 1, "resolved once");
    assert_eq!(state(&store, "gpu-a").await, Some(InstanceState::Running));
    let looks = standin
        .requests()
        .into_iter()
        .filter(|r| r["method"] == "GET" && r["path"] == "/v2/pods/pod-a")
        .count();
    assert!(looks >= 2, "it kept asking until the wait ran out: {looks}");

    // `account power` goes through the same loop.
    let err = stop::power(
        &store,
        "gpu-a",
        PowerVerb::Off,
        &endpoints,
        quick(),
        short(300),
        &FixedClock::new(at(9, 5)),
    )
    .await
    .expect_err("the same loop");
    assert_eq!(err.code(), "stop.other_instance", "{err:?}");
    assert_eq!(state(&store, "gpu-a").await, Some(InstanceState::Running));

    // The provider answers about pod A again: the stop goes through, resolved once.
    standin.script(json!({"confirm_after": 1, "answer_as": {}}));
    let before = stop::resolves_on_this_thread();
    let report = stop::over_api(
        &store,
        "gpu-a",
        &endpoints,
        None,
        None,
        short(10_000),
        &FixedClock::new(at(9, 10)),
    )
    .await
    .expect("pod A's own EXITED");
    assert_eq!(report.stopped_at, at(9, 10));
    assert_eq!(report.api, Some(Provider::Runpod));
    assert_eq!(stop::resolves_on_this_thread() - before, 1);
    assert_eq!(state(&store, "gpu-a").await, Some(InstanceState::Stopped));
    let link = account::link_of(&store, "gpu-a").await.unwrap().unwrap();
    assert_eq!(
        link.remote_state,
        Some(account::RemoteState::Stopped),
        "the link keeps what the provider confirmed"
    );

    // Power on again, then a look after a hand-recorded stop: each one resolve.
    let before = stop::resolves_on_this_thread();
    stop::power(
        &store,
        "gpu-a",
        PowerVerb::On,
        &endpoints,
        quick(),
        short(10_000),
        &FixedClock::new(at(9, 20)),
    )
    .await
    .expect("on");
    assert_eq!(stop::resolves_on_this_thread() - before, 1);
    let before = stop::resolves_on_this_thread();
    let hand =
        stop::record_by_hand_and_look(&store, "gpu-a", &endpoints, &FixedClock::new(at(9, 30)))
            .await
            .expect("recorded and looked");
    assert!(hand.check.expect("through the account").answered);
    assert_eq!(stop::resolves_on_this_thread() - before, 1);

    // A look answered about another pod proves nothing either way.
    standin.script(json!({"answer_as": {"pod-a": "pod-b"}}));
    let err = stop::check_again(&store, "gpu-a", &endpoints, &FixedClock::new(at(9, 40)))
        .await
        .expect_err("pod B's state is not pod A's");
    assert_eq!(err.code(), "stop.other_instance");
    assert!(
        standin.violations().is_empty(),
        "{:?}",
        standin.violations()
    );
}

#[tokio::test]
async fn a_vast_look_answered_about_another_contract_records_nothing() {
    let standin = ProviderStandin::start("vast", "vk");
    let store = Store::open_in_memory().await.unwrap();
    ledger::add_instance(
        &store,
        &NewInstance {
            name: "box".into(),
            provider: "vast".into(),
            region: None,
            gpu_model: "RTX 4090".into(),
            currency: "USD".into(),
            notes: None,
            planned_hours: None,
            budget: None,
            rules: BillingRules::simple(dec!(0.40), 1),
        },
        at(7, 0),
    )
    .await
    .unwrap();
    ledger::record(&store, "box", PowerAction::Start, at(7, 1))
        .await
        .unwrap();
    standin.set_instances(json!([
        {"id": 41, "name": "mine", "state": "running", "price": "0.40"},
        {"id": 42, "name": "theirs", "state": "stopped", "price": "0.40"},
    ]));
    standin.script(json!({"confirm_after": 1000, "answer_as": {"41": "42"}}));
    let err = stop::over_api(
        &store,
        "box",
        &Endpoints::all_at(&standin.base()),
        Some("41"),
        Some(Secret::new("vk")),
        short(300),
        &FixedClock::new(at(9, 0)),
    )
    .await
    .expect_err("contract 42's stopped says nothing of 41");
    assert!(
        matches!(&err, StopError::OtherInstance { other, .. } if other == "42"),
        "{err:?}"
    );
    assert_eq!(state(&store, "box").await, Some(InstanceState::Running));
    let put = standin
        .requests()
        .into_iter()
        .find(|r| r["method"] == "PUT")
        .expect("the stop was asked for");
    assert_eq!(put["path"], "/api/v0/instances/41/");
}
