//! The keeper's Vast.ai calls against the Vast.ai stand-in (`tests/provider-standin`), method,
//! path and body checked there against the documented calls: an interruptible instance seen
//! outbid, a bid raised within the policy's cap and refused above it, an on-demand instance
//! refused a bid, and a host's pending price increase accepted and rejected.

use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use leasehold_core::account::{self, AccountRef, Backoff, Endpoints, Provider};
use leasehold_core::keeper::{self, PolicyChange};
use leasehold_core::ssh::Secret;
use leasehold_core::store::Store;
use leasehold_core::Coded;
use leasehold_testkit::provider_standin::ProviderStandin;
use rust_decimal_macros::dec;
use serde_json::{json, Value};

fn at(h: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, h, 0, 0).unwrap()
}

fn quick() -> Backoff {
    Backoff {
        first: Duration::from_millis(20),
        attempts: 2,
    }
}

async fn synced(standin: &ProviderStandin, var: &str, key: &str) -> Store {
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    std::env::set_var(var, key);
    let account = AccountRef {
        provider: Provider::Vast,
        label: "default".into(),
    };
    account::add(
        &store,
        &account,
        &Secret::new(key),
        Some(var),
        &Endpoints::all_at(&base),
        at(6),
    )
    .await
    .expect("the key is accepted");
    standin.set_instances(json!([
        {"id": "5001", "name": "spot", "state": "stopped", "price": "0.12", "gpu": "RTX 4090",
         "bid": 0.25, "min_bid": 0.31, "outbid": true, "created": at(7).timestamp()},
        {"id": "5002", "name": "steady", "state": "running", "price": "0.44", "gpu": "RTX 4090",
         "created": at(7).timestamp()},
    ]));
    account::sync::sync_account(&store, &account, &Endpoints::all_at(&base), quick(), at(8))
        .await
        .expect("synced");
    store
}

fn puts(standin: &ProviderStandin) -> Vec<Value> {
    standin
        .requests()
        .into_iter()
        .filter(|r| r["method"] == "PUT")
        .collect()
}

#[tokio::test]
async fn an_outbid_instance_gets_a_bid_within_the_cap_and_none_above_it() {
    let standin = ProviderStandin::start("vast", "kv-1");
    let store = synced(&standin, "LH_T_KV1", "kv-1").await;
    let endpoints = Endpoints::all_at(&standin.base());

    let state = keeper::vast::look(&store, "spot", &endpoints, quick(), at(9))
        .await
        .unwrap();
    assert!(state.outbid && state.interruptible, "{state:?}");
    assert_eq!(
        (state.actual.as_str(), state.intended.as_str()),
        ("exited", "running")
    );
    assert_eq!(state.min_bid, Some(dec!(0.31)));

    keeper::set_policy(
        &store,
        Some("spot"),
        PolicyChange {
            bid_cap: Some(dec!(0.40)),
            ..PolicyChange::default()
        },
        at(9),
    )
    .await
    .unwrap();
    let err = keeper::vast::bid(&store, "spot", dec!(0.5), &endpoints, quick(), at(9))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "keeper.above_bid_cap");
    assert!(puts(&standin).is_empty(), "nothing sent above the cap");

    let report = keeper::vast::bid(&store, "spot", dec!(0.35), &endpoints, quick(), at(9))
        .await
        .unwrap();
    assert!(report.was_outbid);
    let sent = puts(&standin);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["path"], "/api/v0/instances/bid_price/5001/");
    assert_eq!(sent[0]["body"], json!({"client_id": "me", "price": 0.35}));
    let state = keeper::vast::look(&store, "spot", &endpoints, quick(), at(9))
        .await
        .unwrap();
    assert!(!state.outbid, "the bid won the GPU back");

    let err = keeper::vast::bid(&store, "steady", dec!(0.3), &endpoints, quick(), at(9))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "keeper.not_interruptible");
    assert_eq!(puts(&standin).len(), 1);
    assert_eq!(standin.violations(), Vec::<Value>::new());
}

#[tokio::test]
async fn a_pending_price_increase_is_accepted_or_rejected_by_its_own_id() {
    let standin = ProviderStandin::start("vast", "kv-2");
    let store = synced(&standin, "LH_T_KV2", "kv-2").await;
    let endpoints = Endpoints::all_at(&standin.base());
    let row = |id: i64, contract: i64| {
        json!({"pending_price_increase_id": id, "contract_id": contract, "host_id": 7,
               "old_gpu_costpersec": 0.0001, "old_disk_ram_costpersec": 0.00001,
               "new_gpu_costpersec": 0.0002, "new_disk_ram_costpersec": 0.00001,
               "contract_end_date": 1_800_000_000, "ask_end_date": 1_800_000_000,
               "created_at": 1_764_000_000})
    };
    standin.script(json!({"price_increases": [row(999, 5002), row(1000, 5001)]}));

    let report = keeper::vast::answer_increase(&store, "steady", true, &endpoints, quick(), at(9))
        .await
        .unwrap();
    assert_eq!(report.increase.pending_id, 999);
    assert_eq!(
        (report.increase.old_per_hour, report.increase.new_per_hour),
        (dec!(0.396), dec!(0.756))
    );
    let err = keeper::vast::answer_increase(&store, "steady", false, &endpoints, quick(), at(9))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "keeper.no_price_increase");

    keeper::vast::answer_increase(&store, "spot", false, &endpoints, quick(), at(9))
        .await
        .unwrap();
    let sent: Vec<(String, Value)> = puts(&standin)
        .into_iter()
        .map(|r| (r["path"].as_str().unwrap().to_owned(), r["body"].clone()))
        .collect();
    assert_eq!(
        sent,
        [
            (
                "/api/v0/instances/accept-price-increase/".to_owned(),
                json!({"pending_price_increase_id": 999})
            ),
            (
                "/api/v0/instances/reject-price-increase/".to_owned(),
                json!({"pending_price_increase_id": 1000})
            ),
        ]
    );
    let err =
        keeper::vast::answer_increase(&store, "gone-nowhere", true, &endpoints, quick(), at(9))
            .await
            .unwrap_err();
    assert!(err.is_bad_input(), "{err:?}");
    assert_eq!(standin.violations(), Vec::<Value>::new());
}

/// The background look: every Vast.ai rental in one round, an outbid kept as its own status
/// and told even in the quiet hours, a host's price rise a reminder until it is answered, and
/// one rental Vast.ai no longer knows never stops the look at the others.
#[tokio::test]
async fn the_background_look_finds_the_outbid_and_the_price_rise_and_reminds_of_both() {
    use leasehold_core::remind::{self, observe, ReminderKind};
    use leasehold_core::status::{self, StatusState};

    let standin = ProviderStandin::start("vast", "kv-3");
    let store = synced(&standin, "LH_T_KV3", "kv-3").await;
    let endpoints = Endpoints::all_at(&standin.base());
    standin.script(json!({"price_increases": [
        {"pending_price_increase_id": 321, "contract_id": 5002, "host_id": 7,
         "old_gpu_costpersec": 0.0001, "old_disk_ram_costpersec": 0.00001,
         "new_gpu_costpersec": 0.0002, "new_disk_ram_costpersec": 0.00001,
         "contract_end_date": 1_800_000_000, "ask_end_date": 1_800_000_000,
         "created_at": 1_764_000_000}]}));

    let round = keeper::vast::watch(&store, &endpoints, quick(), at(9))
        .await
        .unwrap();
    assert_eq!(round.looked, ["spot", "steady"]);
    assert_eq!(round.outbid, ["spot"]);
    assert_eq!(round.price_increases, ["steady"]);
    assert!(round.failed.is_empty(), "{round:?}");

    let spot = status::for_instance(&store, "spot", at(9)).await.unwrap();
    assert_eq!(spot.state, StatusState::Outbid);
    assert_eq!(spot.warnings[0].code, "status.outbid");
    assert_eq!(spot.warnings[0].params["rate"], "0.12");
    assert_eq!(spot.warnings[0].params["min_bid"], "0.31");
    let steady = status::for_instance(&store, "steady", at(9)).await.unwrap();
    assert_eq!(steady.state, StatusState::Running);
    assert!(
        steady
            .warnings
            .iter()
            .any(|w| w.code == "status.price_increase_pending" && w.params["new"] == "0.756"),
        "{:?}",
        steady.warnings
    );

    let due = |now| {
        let store = store.clone();
        async move {
            let histories = leasehold_core::billing::ledger::histories(&store)
                .await
                .unwrap();
            let (rules, _) = remind::due_in_store(&store, &Default::default(), now)
                .await
                .unwrap();
            let seen = observe::gather(&store, &histories, &rules, now)
                .await
                .unwrap();
            remind::due_now(&histories, &seen, &rules, now).unwrap()
        }
    };
    let reminders = due(at(9)).await;
    let outbid = reminders
        .iter()
        .find(|r| r.kind == ReminderKind::Outbid)
        .expect("an outbid reminder");
    assert_eq!(outbid.instance, "spot");
    assert_eq!(outbid.due_at, at(9));
    assert!(remind::stakes::breaks_quiet_hours(outbid));
    let rise = reminders
        .iter()
        .find(|r| r.kind == ReminderKind::PriceIncrease)
        .expect("a price rise reminder");
    assert_eq!(
        (rise.instance.as_str(), rise.occurrence.as_str()),
        ("steady", "321")
    );
    assert!(!remind::stakes::breaks_quiet_hours(rise));

    // An hour later it is still outbid: the same occurrence, not a new reminder.
    keeper::vast::watch(&store, &endpoints, quick(), at(10))
        .await
        .unwrap();
    let later = due(at(10)).await;
    let again = later
        .iter()
        .find(|r| r.kind == ReminderKind::Outbid)
        .unwrap();
    assert_eq!(again.occurrence, outbid.occurrence);

    // Rejected: the warning and the reminder go.
    keeper::vast::answer_increase(&store, "steady", false, &endpoints, quick(), at(10))
        .await
        .unwrap();
    assert!(!due(at(10))
        .await
        .iter()
        .any(|r| r.kind == ReminderKind::PriceIncrease));

    // Vast.ai forgets "steady": "spot" is still looked at.
    standin.set_instances(json!([
        {"id": "5001", "name": "spot", "state": "stopped", "price": "0.12", "gpu": "RTX 4090",
         "bid": 0.25, "min_bid": 0.31, "outbid": true, "created": at(7).timestamp()},
    ]));
    let round = keeper::vast::watch(&store, &endpoints, quick(), at(11))
        .await
        .unwrap();
    assert_eq!(round.looked, ["spot"]);
    assert_eq!(round.failed.len(), 1);
    assert_eq!(round.failed[0].instance, "steady");
    assert_eq!(standin.violations(), Vec::<Value>::new());
}
