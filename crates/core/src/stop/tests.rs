use chrono::TimeZone;
use rust_decimal::Decimal;

use super::*;
use crate::billing::{BillingRules, NewInstance};

fn facts(command: bool, api: bool, api_ready: bool, ssh: bool) -> RouteFacts {
    RouteFacts {
        command,
        api,
        api_ready,
        ssh_target_saved: ssh,
    }
}

#[test]
fn the_api_leads_when_it_is_set_up_then_ssh_then_the_console() {
    // RunPod with id and key: the provider's word beats silence over SSH.
    assert_eq!(choose_route(facts(true, true, true, true)), StopRoute::Api);
    // RunPod without a key: its runpodctl over SSH works.
    assert_eq!(choose_route(facts(true, true, false, true)), StopRoute::Ssh);
    // Vast.ai without a key: only the API stops the contract.
    assert_eq!(
        choose_route(facts(false, true, false, true)),
        StopRoute::ApiNeedsSetup
    );
    // Lambda: neither; the console it is.
    assert_eq!(
        choose_route(facts(false, false, false, true)),
        StopRoute::Console
    );
    // AutoDL never connected: its shutdown cannot be run from here.
    assert_eq!(
        choose_route(facts(true, false, false, false)),
        StopRoute::Console
    );
}

#[test]
fn a_hand_recorded_stop_is_checked_through_the_api_else_ssh_else_not_at_all() {
    assert_eq!(
        check_route(facts(false, true, true, true)),
        Some(StopVia::Api)
    );
    assert_eq!(
        check_route(facts(true, false, false, true)),
        Some(StopVia::Ssh)
    );
    assert_eq!(check_route(facts(true, true, false, false)), None);
}

#[test]
fn one_id_check_for_every_route() {
    assert_eq!(
        check_provider_id(Provider::Runpod, " abc-123_x ").unwrap(),
        "abc-123_x"
    );
    assert_eq!(check_provider_id(Provider::Vast, "4242").unwrap(), "4242");
    for (provider, bad) in [
        (Provider::Vast, "42/../../admin"),
        (Provider::Vast, "abc"),
        (Provider::Runpod, "../pods"),
        (Provider::Runpod, "a?b"),
        (Provider::Runpod, ""),
    ] {
        assert!(
            matches!(
                check_provider_id(provider, bad),
                Err(StopError::BadProviderId { .. })
            ),
            "{bad:?} is refused for {provider:?}"
        );
    }
    assert!(check_provider_id(Provider::Runpod, &"a".repeat(65)).is_err());
}

fn at(minutes: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, 8, 0, 0).unwrap() + chrono::Duration::minutes(minutes)
}

async fn running(provider: &str) -> Store {
    let store = Store::open_in_memory().await.expect("store");
    ledger::add_instance(
        &store,
        &NewInstance {
            name: "box".into(),
            provider: provider.into(),
            region: None,
            gpu_model: "RTX 4090".into(),
            currency: "CNY".into(),
            notes: None,
            planned_hours: None,
            budget: None,
            rules: BillingRules::simple(Decimal::new(25, 1), 1),
        },
        at(0),
    )
    .await
    .expect("instance");
    ledger::record(&store, "box", PowerAction::Start, at(1))
        .await
        .expect("started");
    store
}

/// Each request resolves the instance (and so replays its ledger) exactly once, whichever
/// route it takes and wherever it is refused.
#[tokio::test]
async fn each_request_resolves_the_instance_once() {
    let store = running("autodl").await;
    let clock = crate::clock::FixedClock::new(at(10));
    let endpoints = ApiEndpoints::all_at("http://127.0.0.1:9");
    let once = |before: u64| resolves_on_this_thread() - before;

    let before = resolves_on_this_thread();
    let plan = plan(&store, "box", at(10)).await.expect("plan");
    assert_eq!(plan.route, StopRoute::Console);
    assert_eq!(once(before), 1, "plan");

    let before = resolves_on_this_thread();
    let err = by_plan(&store, "box", &endpoints, StopWait::default(), &clock)
        .await
        .expect_err("AutoDL never connected: the console");
    assert!(matches!(err, StopError::NeedsConsole { .. }), "{err:?}");
    assert_eq!(once(before), 1, "by_plan");

    let before = resolves_on_this_thread();
    let err = now(
        &store,
        "box",
        StopBy::Api {
            provider_id: None,
            key: None,
        },
        &endpoints,
        StopWait::default(),
        &clock,
        std::future::pending(),
    )
    .await
    .expect_err("AutoDL has no stop API of its own");
    assert!(matches!(err, StopError::NoApi { .. }), "{err:?}");
    assert_eq!(once(before), 1, "now");

    let before = resolves_on_this_thread();
    let err = power(
        &store,
        "box",
        PowerVerb::Off,
        &endpoints,
        Backoff::default(),
        StopWait::default(),
        &clock,
    )
    .await
    .expect_err("not linked");
    assert_eq!(crate::Coded::code(&err), "account.not_linked");
    assert_eq!(once(before), 1, "power");

    let before = resolves_on_this_thread();
    let hand = record_by_hand_and_look(&store, "box", &endpoints, &clock)
        .await
        .expect("recorded");
    assert_eq!(hand.check, None, "no way to look");
    assert_eq!(once(before), 1, "record_by_hand_and_look");

    let before = resolves_on_this_thread();
    assert_eq!(
        check_again(&store, "box", &endpoints, &clock)
            .await
            .unwrap(),
        None
    );
    assert_eq!(once(before), 1, "check_again");
}

#[tokio::test]
async fn the_ssh_route_refuses_what_cannot_stop_the_billing_before_logging_in() {
    let store = running("vast").await;
    let clock = crate::clock::FixedClock::new(at(10));
    let how = SshStop {
        // Nothing listens here: a login would fail, so a refusal proves nothing was tried.
        ssh_command: Some("ssh -p 9 root@127.0.0.1".into()),
        ..SshStop::default()
    };
    let err = now(
        &store,
        "box",
        StopBy::Ssh(how),
        &ApiEndpoints::default(),
        StopWait::default(),
        &clock,
        std::future::pending(),
    )
    .await
    .expect_err("a shutdown inside Vast does not stop the contract");
    assert!(
        matches!(err, StopError::NoPowerOffCommand { .. }),
        "{err:?}"
    );
}
