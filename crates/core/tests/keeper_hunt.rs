//! The keeper against the AutoDL stand-in (`tests/provider-standin`): a hunt that meets "no
//! stock" (`暂无库存`) N times and then powers on, with its tries and waits; the time and
//! spending limits; a hunt that survives a restart; a key refused mid-hunt and a released
//! instance ending it at once; the notice told once; and "keep it alive" with its cost, done
//! only when the user accepts it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use leasehold_core::account::{self, AccountRef, Backoff, Endpoints, Provider};
use leasehold_core::billing::{ledger, InstanceState};
use leasehold_core::clock::FixedClock;
use leasehold_core::keeper::tray::TrayKeep;
use leasehold_core::keeper::{self, Action, GaveUp, HuntDeps, HuntLimits, Sleeper};
use leasehold_core::ssh::Secret;
use leasehold_core::stop::StopWait;
use leasehold_core::store::Store;
use leasehold_core::{Clock, Coded};
use leasehold_testkit::provider_standin::ProviderStandin;
use rust_decimal_macros::dec;
use serde_json::{json, Value};

fn at(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, h, m, 0).unwrap()
}

/// Moves the fixed clock on instead of sleeping, and keeps each wait.
struct Skip<'a> {
    clock: &'a FixedClock,
    waits: Mutex<Vec<u64>>,
}

impl<'a> Skip<'a> {
    fn new(clock: &'a FixedClock) -> Self {
        Self {
            clock,
            waits: Mutex::new(Vec::new()),
        }
    }
    fn waits(&self) -> Vec<u64> {
        self.waits.lock().unwrap().clone()
    }
}

impl Sleeper for Skip<'_> {
    fn sleep(
        &self,
        wait: Duration,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        self.waits.lock().unwrap().push(wait.as_secs());
        self.clock
            .advance(chrono::Duration::seconds(wait.as_secs() as i64));
        Box::pin(async {})
    }
}

fn quick() -> Backoff {
    Backoff {
        first: Duration::from_millis(20),
        attempts: 2,
    }
}

fn short() -> StopWait {
    StopWait {
        limit: Duration::from_secs(3),
        every: Duration::from_millis(20),
        ..StopWait::default()
    }
}

/// An AutoDL account (key in `var`) with one stopped instance `lora` at ¥2.28/h, synced.
async fn stopped_autodl(standin: &ProviderStandin, store: &Store, var: &str, key: &str) {
    let base = standin.base();
    std::env::set_var(var, key);
    let account = AccountRef {
        provider: Provider::Autodl,
        label: "default".into(),
    };
    account::add(
        store,
        &account,
        &Secret::new(key),
        Some(var),
        &Endpoints::all_at(&base),
        at(6, 0),
    )
    .await
    .expect("the key is accepted");
    standin.set_instances(json!([
        {"id": "adl-1", "name": "lora", "state": "stopped", "price": "2.28", "gpu": "RTX 4090"}
    ]));
    account::sync::sync_account(
        store,
        &account,
        &Endpoints::all_at(&base),
        quick(),
        at(8, 0),
    )
    .await
    .expect("synced");
    let state = ledger::show(store, "lora", at(8, 0))
        .await
        .unwrap()
        .summary
        .state;
    assert_eq!(state, Some(InstanceState::Stopped));
}

fn power_ons(standin: &ProviderStandin) -> Vec<Value> {
    standin
        .requests()
        .into_iter()
        .filter(|r| r["path"] == "/api/v1/dev/instance/pro/power_on")
        .collect()
}

fn limits(for_s: u64, max_spend: Option<rust_decimal::Decimal>) -> HuntLimits {
    HuntLimits {
        for_at_most: Duration::from_secs(for_s),
        every_min: Duration::from_secs(10),
        every_max: Duration::from_secs(120),
        max_spend,
    }
}

fn no_violations(standin: &ProviderStandin) {
    assert_eq!(standin.violations(), Vec::<Value>::new());
}

#[tokio::test]
async fn no_stock_three_times_then_on_recorded_once_confirmed_and_told_once() {
    let standin = ProviderStandin::start("autodl", "kh-1");
    let store = Store::open_in_memory().await.unwrap();
    stopped_autodl(&standin, &store, "LH_T_KH1", "kh-1").await;
    standin.script(json!({"no_stock": 3}));
    let clock = FixedClock::new(at(9, 0));
    let skip = Skip::new(&clock);
    let endpoints = Endpoints::all_at(&standin.base());
    let deps = HuntDeps {
        endpoints: &endpoints,
        backoff: quick(),
        wait: short(),
        clock: &clock,
        sleeper: &skip,
    };
    // Stopped and linked to an AutoDL account: the tray offers a hunt.
    assert_eq!(
        keeper::tray::entries(&store, at(9, 0)).await.unwrap(),
        [TrayKeep::CanHunt {
            instance: "lora".into()
        }]
    );
    keeper::start(&store, "lora", limits(7200, Some(dec!(10))), clock.now())
        .await
        .unwrap();
    assert_eq!(
        keeper::tray::entries(&store, at(9, 0)).await.unwrap(),
        [TrayKeep::Hunting {
            instance: "lora".into(),
            tries: 0
        }]
    );
    let report = keeper::run(&store, "lora", &deps).await.unwrap();
    assert_eq!(report.tries, 4, "{report:?}");
    assert_eq!(report.gave_up, None);
    assert_eq!(skip.waits(), [10, 15, 22], "10 s growing by half");
    let on_at = at(9, 0) + chrono::Duration::seconds(47);
    assert_eq!(report.powered_on_at, Some(on_at));
    let tries = power_ons(&standin);
    assert_eq!(tries.len(), 4);
    assert!(tries
        .iter()
        .all(|r| r["body"] == json!({"instance_uuid": "adl-1", "payload": "gpu"})));
    let summary = ledger::show(&store, "lora", on_at).await.unwrap().summary;
    assert_eq!(summary.state, Some(InstanceState::Running));
    assert_eq!(summary.state_since, Some(on_at));

    // The tray says so on its line for two hours, then it is one more running instance.
    assert_eq!(
        keeper::tray::entries(&store, on_at).await.unwrap(),
        [TrayKeep::On {
            instance: "lora".into(),
            gpu_model: summary.gpu_model.clone(),
            since: on_at,
            price_per_hour: dec!(2.28),
            currency: "CNY".into(),
        }]
    );
    assert!(
        keeper::tray::entries(&store, on_at + chrono::Duration::hours(3))
            .await
            .unwrap()
            .is_empty()
    );

    // Brought up by the hunt: connect and verify it before work, until "not now".
    let status = leasehold_core::status::for_instance(&store, "lora", on_at)
        .await
        .unwrap();
    let nudge = status
        .warnings
        .iter()
        .find(|w| w.code == "status.not_verified")
        .expect("connect and verify what the hunt powered on");
    assert_eq!(nudge.params["reason"], "hunt");
    leasehold_core::status::dismiss_follow_up(&store, "lora", on_at)
        .await
        .unwrap();
    let status = leasehold_core::status::for_instance(&store, "lora", on_at)
        .await
        .unwrap();
    assert!(status
        .warnings
        .iter()
        .all(|w| w.code != "status.not_verified"));

    let told = keeper::notices::take(&store, on_at).await.unwrap();
    assert_eq!(told.len(), 1);
    assert!(
        told[0]
            .text
            .contains("is on — billing 2.28 CNY/h since 09:00"),
        "{}",
        told[0].text
    );
    assert!(
        keeper::notices::take(&store, on_at)
            .await
            .unwrap()
            .is_empty(),
        "told once"
    );
    // A finished hunt does not power anything on again.
    let again = keeper::run(&store, "lora", &deps).await.unwrap();
    assert_eq!(again.tries, 4);
    assert_eq!(power_ons(&standin).len(), 4);
    no_violations(&standin);
}

#[tokio::test]
async fn the_time_and_spending_limits_end_the_hunt() {
    let standin = ProviderStandin::start("autodl", "kh-2");
    let store = Store::open_in_memory().await.unwrap();
    stopped_autodl(&standin, &store, "LH_T_KH2", "kh-2").await;
    standin.script(json!({"no_stock": 1000}));
    let clock = FixedClock::new(at(9, 0));
    let skip = Skip::new(&clock);
    let endpoints = Endpoints::all_at(&standin.base());
    let deps = HuntDeps {
        endpoints: &endpoints,
        backoff: quick(),
        wait: short(),
        clock: &clock,
        sleeper: &skip,
    };
    // One hour at ¥2.28 is above ¥2: not one try.
    keeper::start(&store, "lora", limits(600, Some(dec!(2))), clock.now())
        .await
        .unwrap();
    let report = keeper::run(&store, "lora", &deps).await.unwrap();
    assert_eq!((report.tries, report.gave_up), (0, Some(GaveUp::Spend)));
    assert!(
        report.last_answer.contains("2.28"),
        "{}",
        report.last_answer
    );
    assert!(power_ons(&standin).is_empty());

    // A minute: tries at 0, 10, 25 and 47 s; the next would be at 80 s.
    keeper::start(&store, "lora", limits(60, None), clock.now())
        .await
        .unwrap();
    let report = keeper::run(&store, "lora", &deps).await.unwrap();
    assert_eq!((report.tries, report.gave_up), (4, Some(GaveUp::Time)));
    assert!(
        report.last_answer.contains("暂无库存"),
        "{}",
        report.last_answer
    );
    assert_eq!(power_ons(&standin).len(), 4);
    assert_eq!(
        serde_json::to_value(&report).unwrap()["gave_up"],
        "time",
        "the CLI's JSON word"
    );
    let state = ledger::show(&store, "lora", clock.now())
        .await
        .unwrap()
        .summary
        .state;
    assert_eq!(state, Some(InstanceState::Stopped));
    no_violations(&standin);
}

/// Sleeps through its first `free` waits, then tells the test and never wakes (the app quits).
struct QuitAfter<'a> {
    skip: Skip<'a>,
    free: Mutex<u32>,
    quit: Arc<tokio::sync::Notify>,
}

impl Sleeper for QuitAfter<'_> {
    fn sleep(
        &self,
        wait: Duration,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        let mut free = self.free.lock().unwrap();
        if *free == 0 {
            self.quit.notify_one();
            return Box::pin(std::future::pending());
        }
        *free -= 1;
        self.skip.sleep(wait)
    }
}

#[tokio::test]
async fn a_hunt_survives_a_restart_and_goes_on_where_it_was() {
    let standin = ProviderStandin::start("autodl", "kh-3");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let store = Store::open(&path).await.unwrap();
    stopped_autodl(&standin, &store, "LH_T_KH3", "kh-3").await;
    standin.script(json!({"no_stock": 2}));
    let clock = FixedClock::new(at(9, 0));
    let endpoints = Endpoints::all_at(&standin.base());
    let quit = Arc::new(tokio::sync::Notify::new());
    let quitting = QuitAfter {
        skip: Skip::new(&clock),
        free: Mutex::new(1),
        quit: quit.clone(),
    };
    let deps = HuntDeps {
        endpoints: &endpoints,
        backoff: quick(),
        wait: short(),
        clock: &clock,
        sleeper: &quitting,
    };
    keeper::start(&store, "lora", limits(3600, None), clock.now())
        .await
        .unwrap();
    tokio::select! {
        _ = keeper::run(&store, "lora", &deps) => panic!("the hunt should still be waiting"),
        () = quit.notified() => {}
    }
    store.close().await;
    assert_eq!(power_ons(&standin).len(), 2);

    let store = Store::open(&path).await.unwrap();
    // Starting again picks up the hunt under way, with its own limits and tries.
    let row = keeper::start(&store, "lora", limits(60, None), clock.now())
        .await
        .unwrap();
    assert_eq!((row.tries, row.state.as_str()), (2, "hunting"));
    assert_eq!(row.deadline, at(10, 0));
    let listed = keeper::list(&store, clock.now()).await.unwrap();
    assert_eq!(listed[0].next.action, Action::Hunt);
    let skip = Skip::new(&clock);
    let deps = HuntDeps {
        sleeper: &skip,
        ..deps
    };
    let report = keeper::run(&store, "lora", &deps).await.unwrap();
    assert_eq!((report.tries, report.gave_up), (3, None));
    assert!(report.powered_on_at.is_some());
    assert_eq!(skip.waits(), [15], "the wait it was in when the app quit");
    assert_eq!(power_ons(&standin).len(), 3);
    no_violations(&standin);
}

#[tokio::test]
async fn a_refused_key_or_a_released_instance_ends_the_hunt_at_once() {
    let standin = ProviderStandin::start("autodl", "kh-4");
    let store = Store::open_in_memory().await.unwrap();
    stopped_autodl(&standin, &store, "LH_T_KH4", "kh-4").await;
    // Two "no stock", then the key is refused.
    standin.script(
        json!({"no_stock": 10, "fail": [{"status": 401, "times": 1, "after": 2,
        "body": {"code": "AuthorizeFailed", "msg": "token 无效或已过期", "data": null}}]}),
    );
    let clock = FixedClock::new(at(9, 0));
    let skip = Skip::new(&clock);
    let endpoints = Endpoints::all_at(&standin.base());
    let deps = HuntDeps {
        endpoints: &endpoints,
        backoff: quick(),
        wait: short(),
        clock: &clock,
        sleeper: &skip,
    };
    keeper::start(&store, "lora", limits(3600, None), clock.now())
        .await
        .unwrap();
    let report = keeper::run(&store, "lora", &deps).await.unwrap();
    assert_eq!((report.tries, report.gave_up), (3, Some(GaveUp::Refused)));
    assert!(
        report.last_answer.contains("token 无效"),
        "{}",
        report.last_answer
    );
    assert_eq!(skip.waits(), [10, 15], "no wait after the refusal");

    // The instance released at the provider: the first try ends it.
    standin.script(json!({"no_stock": 0}));
    standin.patch("adl-1", json!({"state": "gone"}));
    keeper::start(&store, "lora", limits(3600, None), clock.now())
        .await
        .unwrap();
    let report = keeper::run(&store, "lora", &deps).await.unwrap();
    assert_eq!((report.tries, report.gave_up), (1, Some(GaveUp::Refused)));

    // A hunt is stopped by its row; a stopped hunt runs no more.
    let err = keeper::stop(&store, "lora", clock.now()).await.unwrap_err();
    assert_eq!(err.code(), "keeper.no_hunt");
    no_violations(&standin);
}

/// Stops the hunt at its first wait, as the user's "stop" would from another window.
struct StopAtFirstWait<'a> {
    store: &'a Store,
    clock: &'a FixedClock,
}

impl Sleeper for StopAtFirstWait<'_> {
    fn sleep(
        &self,
        _wait: Duration,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        Box::pin(async move {
            keeper::stop(self.store, "lora", self.clock.now())
                .await
                .unwrap();
        })
    }
}

#[tokio::test]
async fn a_stopped_hunt_tries_no_more() {
    let standin = ProviderStandin::start("autodl", "kh-5");
    let store = Store::open_in_memory().await.unwrap();
    stopped_autodl(&standin, &store, "LH_T_KH5", "kh-5").await;
    standin.script(json!({"no_stock": 10}));
    let clock = FixedClock::new(at(9, 0));
    let stopper = StopAtFirstWait {
        store: &store,
        clock: &clock,
    };
    let endpoints = Endpoints::all_at(&standin.base());
    let deps = HuntDeps {
        endpoints: &endpoints,
        backoff: quick(),
        wait: short(),
        clock: &clock,
        sleeper: &stopper,
    };
    keeper::start(&store, "lora", limits(3600, None), clock.now())
        .await
        .unwrap();
    let report = keeper::run(&store, "lora", &deps).await.unwrap();
    assert_eq!(
        (report.tries, report.gave_up, report.powered_on_at),
        (1, None, None)
    );
    assert_eq!(power_ons(&standin).len(), 1);
    let listed = keeper::list(&store, clock.now()).await.unwrap();
    assert_eq!(listed[0].hunt.as_ref().unwrap().state, "stopped");
}

#[tokio::test]
async fn keep_alive_is_quoted_first_and_done_only_at_the_accepted_cost() {
    let standin = ProviderStandin::start("autodl", "kh-6");
    let store = Store::open_in_memory().await.unwrap();
    stopped_autodl(&standin, &store, "LH_T_KH6", "kh-6").await;
    let summary = ledger::show(&store, "lora", at(8, 0))
        .await
        .unwrap()
        .summary;
    let wipe = summary.wipe_at.expect("AutoDL wipes after 15 days stopped");
    let stopped_since = summary.state_since.unwrap();
    assert_eq!(wipe, stopped_since + chrono::Duration::days(15));

    // 14, 3 and 1 days before: the list offers it (due from 3 days on), nothing is done.
    for (days, due) in [(14, false), (3, true), (1, true)] {
        let now = wipe - chrono::Duration::days(days);
        let listed = keeper::list(&store, now).await.unwrap();
        assert_eq!(listed[0].next.action, Action::OfferKeepAlive);
        assert_eq!(listed[0].next.due, due, "{days} days before");
        assert_eq!(listed[0].wipe_at, Some(wipe));
    }
    let before = standin.requests().len();
    let now = wipe - chrono::Duration::days(1);
    let quote = keeper::quote(&store, "lora", now).await.unwrap();
    assert_eq!((quote.cost, quote.currency.as_str()), (dec!(0.038), "CNY"));
    assert_eq!(
        standin.requests().len(),
        before,
        "a quote asks the provider nothing"
    );

    let clock = FixedClock::new(now);
    let skip = Skip::new(&clock);
    let endpoints = Endpoints::all_at(&standin.base());
    let deps = HuntDeps {
        endpoints: &endpoints,
        backoff: quick(),
        wait: short(),
        clock: &clock,
        sleeper: &skip,
    };
    let err = keeper::keep_alive(&store, "lora", dec!(0.01), &deps)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "keeper.cost_changed");
    assert_eq!(standin.requests().len(), before, "refused before any call");

    let report = keeper::keep_alive(&store, "lora", quote.cost, &deps)
        .await
        .unwrap();
    let asked: Vec<_> = standin.requests()[before..]
        .iter()
        .filter(|r| r["method"] == "POST")
        .map(|r| r["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        asked,
        [
            "/api/v1/dev/instance/pro/power_on",
            "/api/v1/dev/instance/pro/power_off"
        ]
    );
    assert_eq!(report.wipe_at, Some(now + chrono::Duration::days(15)));
    let state = ledger::show(&store, "lora", now)
        .await
        .unwrap()
        .summary
        .state;
    assert_eq!(state, Some(InstanceState::Stopped));
    no_violations(&standin);
}
