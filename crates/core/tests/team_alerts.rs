//! "Left running" alerts against a real PostgreSQL server (`testkit::postgres`): three laptops
//! (Alice, Bob, Carol) in one team. Bob's app watches his rented instance and measures its GPUs
//! idle; Alice names herself to be told. After the syncs, Alice's app raises a reminder for Bob's
//! instance (once per idle stretch), Bob's own app does too, and Carol's, not named, does not.
//! The last Verify of an instance reaches the team only from a member who opted in.

mod team_common;

use chrono::{DateTime, Duration, TimeZone, Utc};
use leasehold_core::billing::{ledger, PowerAction};
use leasehold_core::monitor::history::{self, GpuMinute};
use leasehold_core::remind::{self, ReminderKind, ReminderRules};
use leasehold_core::store::Store;
use leasehold_core::team::{self, TeamError};
use leasehold_testkit::postgres::{TestPostgres, PG_PASSWORD};
use team_common::{joined_laptop, Laptop};

fn t(minutes: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, 9, 0, 0).unwrap() + Duration::minutes(minutes)
}

async fn laptop(url: &str, member: &str) -> Laptop {
    joined_laptop(url, member, t(0)).await
}

/// Bob's A100 at 10/h, started at t(0).
async fn rent(store: &Store) {
    let rental = team_common::rental("bob-a100", None);
    ledger::add_instance(store, &rental, t(0))
        .await
        .expect("add");
    ledger::record(store, "bob-a100", PowerAction::Start, t(0))
        .await
        .expect("start");
}

/// What Bob's monitor writes: one GPU minute each minute in `minutes`, at `utilization` %.
async fn monitor(store: &Store, minutes: std::ops::Range<i64>, utilization: u32) {
    let rows: Vec<GpuMinute> = minutes
        .map(|m| GpuMinute {
            minute: t(m),
            gpu_index: 0,
            samples: 12,
            utilization_avg: f64::from(utilization),
            utilization_max: utilization,
            memory_used_max_mib: 1000,
            memory_total_mib: 81920,
            power_avg_w: Some(60.0),
        })
        .collect();
    history::record(store, "bob-a100", &rows)
        .await
        .expect("record GPU minutes");
}

async fn sync(laptop: &Laptop, now: DateTime<Utc>) {
    team::sync(&laptop.store, now)
        .await
        .unwrap_or_else(|err| panic!("sync: {err}"));
}

/// The left-running reminders a laptop's app sends at `now`.
async fn alerts_sent(laptop: &Laptop, now: DateTime<Utc>) -> Vec<remind::Reminder> {
    let due = remind::team::due_in_store(&laptop.store, now)
        .await
        .expect("team reminders");
    remind::team::tick(
        &laptop.store,
        &due,
        &ReminderRules::default(),
        now,
        &chrono::Utc,
    )
    .await
    .expect("tick")
    .into_iter()
    .filter(|r| r.params.get("alert").map(String::as_str) == Some("left_running"))
    .collect()
}

#[tokio::test]
async fn bobs_idle_instance_alerts_the_named_alice_and_not_carol() {
    std::env::set_var("PGPASSWORD", PG_PASSWORD);
    let pg = TestPostgres::start();
    let alice = laptop(&pg.url(), "alice").await;
    let bob = laptop(&pg.url(), "bob").await;
    let carol = laptop(&pg.url(), "carol").await;

    let err = team::alerts::set(&alice.store, &["mallory".to_owned()], 30)
        .await
        .expect_err("an unknown member is refused");
    assert!(matches!(err, TeamError::UnknownMember { .. }), "{err}");
    let saved = team::alerts::set(&alice.store, &["alice".to_owned()], 30)
        .await
        .expect("Alice names herself");
    assert_eq!(saved.recipients, ["alice"]);

    rent(&bob.store).await;
    // Busy for 10 minutes, then idle from t(10) to t(49): 40 idle minutes at t(50).
    monitor(&bob.store, 0..10, 95).await;
    monitor(&bob.store, 10..50, 0).await;
    let now = t(50);
    for laptop in [&bob, &alice, &carol] {
        sync(laptop, now).await;
    }

    let told = alerts_sent(&alice, now).await;
    assert_eq!(told.len(), 1, "Alice is told once: {told:?}");
    let alert = &told[0];
    assert_eq!(alert.kind, ReminderKind::GpuIdle);
    assert_eq!(alert.instance, "lab", "a team reminder names the team");
    assert_eq!(alert.params["member"], "bob");
    assert_eq!(alert.params["target"], "bob-a100");
    assert_eq!(alert.params["minutes"], "40");
    assert_eq!(
        alert.due_at,
        t(39),
        "due when the stretch reached 30 minutes"
    );
    assert_eq!(alerts_sent(&bob, now).await.len(), 1, "Bob, its own member");
    assert!(
        alerts_sent(&carol, now).await.is_empty(),
        "Carol is not named and not its member"
    );

    // The same stretch goes on: nothing new on the next ticks or syncs.
    monitor(&bob.store, 50..55, 0).await;
    sync(&bob, t(55)).await;
    sync(&alice, t(55)).await;
    assert!(
        alerts_sent(&alice, t(55)).await.is_empty(),
        "once per idle stretch"
    );
    let due = remind::team::due_in_store(&alice.store, t(55))
        .await
        .expect("due");
    let open = remind::team::open(&alice.store, &due).await.expect("open");
    assert_eq!(open.len(), 1, "still open in Alice's popup: {open:?}");

    // Put off for a minute: hidden, not sent again before then, sent once more when it ends.
    remind::team::snooze(&alice.store, open[0].kind, &open[0].occurrence, t(56))
        .await
        .expect("snooze");
    assert!(
        remind::team::open(&alice.store, &due)
            .await
            .expect("open")
            .is_empty(),
        "hidden while snoozed"
    );
    let rules = ReminderRules::default();
    let tick = |now| remind::team::tick(&alice.store, &due, &rules, now, &chrono::Utc);

    assert!(
        tick(t(55)).await.expect("tick").is_empty(),
        "not before the snooze ends"
    );
    let resent = tick(t(56)).await.expect("tick");
    assert_eq!(
        resent.len(),
        1,
        "sent once more when the snooze ends: {resent:?}"
    );
    assert_eq!(resent[0].occurrence, open[0].occurrence);
    assert!(tick(t(57)).await.expect("tick").is_empty(), "and only once");
    let open = remind::team::open(&alice.store, &due).await.expect("open");
    assert_eq!(open.len(), 1, "open again in the popup: {open:?}");

    remind::team::dismiss(&alice.store, open[0].kind, &open[0].occurrence, t(55))
        .await
        .expect("dismiss");
    assert!(
        remind::team::open(&alice.store, &due)
            .await
            .expect("open")
            .is_empty(),
        "closed"
    );

    // The GPUs work again, then sit idle for a new stretch: a new alert.
    monitor(&bob.store, 55..60, 90).await;
    monitor(&bob.store, 60..95, 0).await;
    sync(&bob, t(95)).await;
    sync(&alice, t(95)).await;
    let again = alerts_sent(&alice, t(95)).await;
    assert_eq!(again.len(), 1, "a new idle stretch alerts again: {again:?}");
    assert_ne!(again[0].occurrence, alert.occurrence);

    // Offline, Alice's app still knows the settings and the last reports.
    let status = team::status_with_idle(&alice.store, &Default::default(), t(95))
        .await
        .expect("status");
    assert_eq!(status.alerts.recipients, ["alice"]);
    assert_eq!(status.alerts.after_minutes, 30);
    let view = team::status(&alice.store, t(95)).await.expect("status");
    assert_eq!(view.left_running.len(), 1, "{:?}", view.left_running);
    assert_eq!(view.left_running[0].member, "bob");
}

#[tokio::test]
async fn a_longer_alert_time_set_by_one_member_holds_for_every_member() {
    std::env::set_var("PGPASSWORD", PG_PASSWORD);
    let pg = TestPostgres::start();
    let alice = laptop(&pg.url(), "alice").await;
    let bob = laptop(&pg.url(), "bob").await;
    let err = team::alerts::set(&alice.store, &[], 2)
        .await
        .expect_err("too short");
    assert!(matches!(err, TeamError::AlertMinutes { .. }), "{err}");
    team::alerts::set(&alice.store, &["alice".to_owned()], 60)
        .await
        .expect("set");
    rent(&bob.store).await;
    monitor(&bob.store, 0..45, 0).await;
    sync(&bob, t(45)).await;
    sync(&alice, t(45)).await;
    assert_eq!(
        team::alerts::settings(&bob.store)
            .await
            .unwrap()
            .after_minutes,
        60
    );
    assert!(
        alerts_sent(&alice, t(45)).await.is_empty(),
        "45 idle minutes are not 60"
    );
    assert!(alerts_sent(&bob, t(45)).await.is_empty());
}

/// A Verify run of `instance` recorded on a laptop, with `errors` errors and one finding.
async fn verified(store: &Store, instance: &str, at: DateTime<Utc>, errors: i64) {
    use leasehold_core::store::probe_runs::{insert_probe_run, NewProbeRunRow};
    let mut conn = store.pool().acquire().await.expect("connection");
    let id: i64 = sqlx::query_scalar("SELECT id FROM instances WHERE name = ?")
        .bind(instance)
        .fetch_one(&mut *conn)
        .await
        .expect("instance");
    insert_probe_run(
        &mut conn,
        &NewProbeRunRow {
            instance_id: Some(id),
            target: "root@gpu:22",
            collected_at: at,
            facts: "{}",
            findings: "[]",
            finding_keys: r#"["driver.mismatch@gpu0"]"#,
            errors,
            warnings: 1,
        },
    )
    .await
    .expect("record the run");
}

#[tokio::test]
async fn the_last_verify_is_shared_only_by_a_member_who_opts_in() {
    std::env::set_var("PGPASSWORD", PG_PASSWORD);
    let pg = TestPostgres::start();
    let alice = laptop(&pg.url(), "alice").await;
    let bob = laptop(&pg.url(), "bob").await;
    rent(&bob.store).await;
    verified(&bob.store, "bob-a100", t(5), 2).await;
    sync(&bob, t(10)).await;
    sync(&alice, t(10)).await;
    let status = team::status(&alice.store, t(10)).await.expect("status");
    assert!(
        status.verify.is_empty(),
        "off by default: {:?}",
        status.verify
    );
    assert!(!status.share_verify);

    team::verify::set_sharing(&bob.store, true, t(11))
        .await
        .expect("Bob opts in");
    verified(&bob.store, "bob-a100", t(12), 1).await;
    sync(&bob, t(15)).await;
    sync(&alice, t(15)).await;
    let status = team::status(&alice.store, t(15)).await.expect("status");
    assert_eq!(status.verify.len(), 1, "{:?}", status.verify);
    let shared = &status.verify[0];
    assert_eq!(
        (shared.instance.as_str(), shared.member.as_str()),
        ("bob-a100", "bob")
    );
    assert_eq!(shared.summary.collected_at, t(12), "the last run");
    assert_eq!((shared.summary.errors, shared.summary.warnings), (1, 1));
    assert_eq!(shared.summary.finding_keys, ["driver.mismatch@gpu0"]);
    assert!(!status.share_verify, "Alice's own choice is still off");
}
