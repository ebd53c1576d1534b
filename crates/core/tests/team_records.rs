//! Team mode shares more than the ledger (against a real PostgreSQL, `testkit::postgres`): an
//! instance's budget, backup records, release checks and overrides, reminders' state, the team
//! budgets (kept for offline views) and an instance's project. Two laptops, each sees what the
//! other recorded after a sync; a budget changed on both converges to the later change; a
//! reminder fired on one laptop is not fired again by the other's scheduler.

mod team_common;

use chrono::{DateTime, Duration, TimeZone, Utc};
use leasehold_core::billing::{ledger, PowerAction};
use leasehold_core::remind;
use leasehold_core::store::backups::{self, BackupItemRow, BackupRow, ReleaseCheckRow};
use leasehold_core::store::{reminders, Store};
use leasehold_core::team;
use leasehold_testkit::postgres::TestPostgres;
use rust_decimal::Decimal;
use team_common::{laptop, rental, Laptop};

fn h(hours: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, 8, 0, 0).unwrap() + Duration::hours(hours)
}

async fn join(laptop: &Laptop, url: &str, member: &str) {
    team_common::join(laptop, url, member, h(0)).await;
}

async fn sync(laptop: &Laptop, now: DateTime<Utc>) -> team::SyncReport {
    let report = team::sync(&laptop.store, now)
        .await
        .unwrap_or_else(|err| panic!("sync: {err}"));
    assert!(report.conflicts.is_empty(), "{:?}", report.conflicts);
    report
}

async fn id_of(store: &Store, name: &str) -> i64 {
    sqlx::query_scalar("SELECT id FROM instances WHERE name = ?")
        .bind(name)
        .fetch_one(store.pool())
        .await
        .unwrap_or_else(|err| panic!("{name} is here: {err}"))
}

async fn budget_of(store: &Store, name: &str) -> Option<Decimal> {
    ledger::list(store, h(1))
        .await
        .expect("list")
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("{name} is listed"))
        .budget
        .map(|b| b.amount)
}

#[tokio::test]
async fn budgets_backups_release_records_and_reminder_state_reach_the_other_laptop() {
    let pg = TestPostgres::start();
    let (alice, bob) = (laptop().await, laptop().await);
    join(&alice, &pg.url(), "alice").await;
    join(&bob, &pg.url(), "bob").await;
    let a = &alice.store;
    ledger::add_instance(a, &rental("shared", Some("50")), h(0))
        .await
        .expect("add");
    let instance = id_of(a, "shared").await;
    let mut conn = a.pool().acquire().await.unwrap();
    let backup = backups::insert_backup(
        &mut conn,
        &BackupRow {
            id: 0,
            instance_id: Some(instance),
            target: "root@gpu.example:22".into(),
            local_dir: "/home/alice/backups/shared".into(),
            started_at: h(1),
            finished_at: h(1) + Duration::minutes(5),
            files: 3,
            bytes: 4096,
        },
    )
    .await
    .unwrap();
    backups::insert_item(
        &mut conn,
        &BackupItemRow {
            id: 0,
            backup_id: backup,
            kind: "folder".into(),
            remote_path: "/root/work".into(),
            local_path: Some("/home/alice/backups/shared/work".into()),
            files: 3,
            bytes: 4096,
            sha256: None,
            detail: None,
        },
    )
    .await
    .unwrap();
    let check = backups::insert_check(
        &mut conn,
        &ReleaseCheckRow {
            id: 0,
            instance_id: instance,
            at: h(2),
            blocked: true,
            checks: r#"[{"code":"release.unsaved","ok":false}]"#.into(),
        },
    )
    .await
    .unwrap();
    backups::insert_override(
        &mut conn,
        &backups::ReleaseOverrideRow {
            id: 0,
            instance_id: instance,
            check_id: Some(check),
            code: "release.unsaved".into(),
            reason: "results already on the NAS".into(),
            at: h(2),
        },
    )
    .await
    .unwrap();
    drop(conn);
    sync(&alice, h(3)).await;
    let pulled = sync(&bob, h(3)).await;
    assert_eq!(pulled.pulled, 1, "the created event");

    let b = &bob.store;
    assert_eq!(
        budget_of(b, "shared").await,
        Some("50".parse().unwrap()),
        "Bob sees Alice's budget"
    );
    let here = id_of(b, "shared").await;
    let mut conn = b.pool().acquire().await.unwrap();
    let seen = backups::for_instance(&mut conn, here).await.unwrap();
    assert_eq!(seen.len(), 1, "Bob sees Alice's backup: {seen:?}");
    assert_eq!(seen[0].files, 3);
    assert_eq!(seen[0].finished_at, h(1) + Duration::minutes(5));
    assert!(
        seen[0].local_dir.starts_with("alice: "),
        "the copy is on Alice's computer: {}",
        seen[0].local_dir
    );
    assert!(
        !seen[0].local_dir.contains("/home/alice"),
        "where on her computer is not shared: {}",
        seen[0].local_dir
    );
    let items = backups::items(&mut conn, seen[0].id).await.unwrap();
    assert_eq!(items.len(), 1, "with its items");
    assert_eq!(items[0].local_path, None, "without her local paths");
    assert_eq!(items[0].remote_path, "/root/work");
    let check = backups::latest_check(&mut conn, here)
        .await
        .unwrap()
        .expect("Bob sees Alice's release check");
    assert!(check.blocked);
    let overrides = backups::overrides(&mut conn, here).await.unwrap();
    assert_eq!(overrides.len(), 1, "and her override");
    assert_eq!(overrides[0].check_id, Some(check.id), "of that check");
    assert_eq!(overrides[0].reason, "results already on the NAS");
    drop(conn);

    // Bob changes the budget; Alice sees it after both sync, and nothing comes back twice.
    ledger::set_budget(b, "shared", Some("80".parse().unwrap()), h(4))
        .await
        .expect("budget");
    sync(&bob, h(4)).await;
    sync(&alice, h(4)).await;
    assert_eq!(budget_of(a, "shared").await, Some("80".parse().unwrap()));
    ledger::set_budget(a, "shared", None, h(5))
        .await
        .expect("clear");
    sync(&alice, h(5)).await;
    sync(&bob, h(5)).await;
    assert_eq!(budget_of(b, "shared").await, None, "a cleared budget");
    let mut conn = b.pool().acquire().await.unwrap();
    assert_eq!(
        backups::for_instance(&mut conn, here).await.unwrap().len(),
        1,
        "each backup once"
    );
    assert_eq!(
        pg.psql("SELECT count(*) FROM shared_records"),
        "4",
        "budget, backup, check and override: one row each on the server"
    );
}

#[tokio::test]
async fn a_budget_changed_on_both_laptops_while_offline_converges() {
    let pg = TestPostgres::start();
    let (alice, bob) = (laptop().await, laptop().await);
    join(&alice, &pg.url(), "alice").await;
    join(&bob, &pg.url(), "bob").await;
    ledger::add_instance(&alice.store, &rental("shared", Some("50")), h(0))
        .await
        .expect("add");
    sync(&alice, h(1)).await;
    sync(&bob, h(1)).await;
    // Offline: Alice changes it once, Bob twice (his change is the later one: it saw more).
    ledger::set_budget(&alice.store, "shared", Some("60".parse().unwrap()), h(2))
        .await
        .unwrap();
    ledger::set_budget(&bob.store, "shared", Some("70".parse().unwrap()), h(2))
        .await
        .unwrap();
    ledger::set_budget(&bob.store, "shared", Some("75".parse().unwrap()), h(2))
        .await
        .unwrap();
    for order in [[&alice, &bob], [&bob, &alice], [&alice, &bob]] {
        for one in order {
            sync(one, h(3)).await;
        }
    }
    let on_alice = budget_of(&alice.store, "shared").await;
    let on_bob = budget_of(&bob.store, "shared").await;
    assert_eq!(on_alice, on_bob, "both laptops keep the same budget");
    assert_eq!(on_alice, Some("75".parse().unwrap()));
}

#[tokio::test]
async fn a_reminder_fired_on_one_laptop_is_not_fired_again_on_the_other() {
    let pg = TestPostgres::start();
    let (alice, bob) = (laptop().await, laptop().await);
    join(&alice, &pg.url(), "alice").await;
    join(&bob, &pg.url(), "bob").await;
    // 10 an hour against a budget of 10: the budget reminders are due after an hour.
    ledger::add_instance(&alice.store, &rental("shared", Some("10")), h(0))
        .await
        .expect("add");
    ledger::record(&alice.store, "shared", PowerAction::Start, h(0))
        .await
        .expect("start");
    sync(&alice, h(0)).await;
    sync(&bob, h(0)).await;

    let now = h(2);
    let (rules, due) = remind::due_observed(&alice.store, now).await.expect("due");
    assert!(!due.is_empty(), "something is due on Alice's laptop");
    let fired = remind::schedule::tick(&alice.store, &due, &rules, now, &Utc)
        .await
        .expect("tick");
    assert!(!fired.fired.is_empty(), "Alice's app sends it");
    let first = fired.fired[0].clone();

    // Before a sync Bob's app would send the same reminder; after it, not.
    sync(&alice, now).await;
    sync(&bob, now).await;
    let (rules, due) = remind::due_observed(&bob.store, now).await.expect("due");
    assert!(
        due.iter()
            .any(|r| r.kind == first.kind && r.occurrence == first.occurrence),
        "the same reminder is due on Bob's laptop too: {due:?}"
    );
    let on_bob = remind::schedule::tick(&bob.store, &due, &rules, now, &Utc)
        .await
        .expect("tick");
    assert!(
        on_bob.fired.is_empty(),
        "Bob's app does not send what Alice's sent: {:?}",
        on_bob.fired
    );

    // Bob dismisses it; Alice's laptop learns it.
    let here = id_of(&bob.store, "shared").await;
    remind::schedule::dismiss(&bob.store, here, first.kind, &first.occurrence, now)
        .await
        .expect("dismiss");
    sync(&bob, now).await;
    sync(&alice, now).await;
    let mut conn = alice.store.pool().acquire().await.unwrap();
    let row = reminders::find(
        &mut conn,
        id_of(&alice.store, "shared").await,
        first.kind.as_str(),
        &first.occurrence,
    )
    .await
    .unwrap()
    .expect("the reminder is known");
    assert_eq!(row.dismissed_at, Some(now), "Bob's dismissal reached Alice");
}

#[tokio::test]
async fn team_budgets_and_projects_are_shared_and_work_offline() {
    let pg = TestPostgres::start();
    let (alice, bob) = (laptop().await, laptop().await);
    join(&alice, &pg.url(), "alice").await;
    join(&bob, &pg.url(), "bob").await;
    team::set_budget(&alice.store, "CNY", "1000".parse().unwrap())
        .await
        .expect("team budget");
    ledger::add_instance(&alice.store, &rental("train", None), h(0))
        .await
        .expect("add");
    team::set_project(&alice.store, "train", Some("llm-finetune"))
        .await
        .expect("project");
    ledger::record(&alice.store, "train", PowerAction::Start, h(0))
        .await
        .expect("start");
    ledger::add_instance(&bob.store, &rental("eval", None), h(0))
        .await
        .expect("add");
    ledger::record(&bob.store, "eval", PowerAction::Start, h(0))
        .await
        .expect("start");
    sync(&alice, h(2)).await;
    sync(&bob, h(2)).await;
    drop(pg); // the server goes away: Bob's views come from what the last sync brought

    let status = team::status(&bob.store, h(2)).await.expect("status");
    assert!(!status.online);
    assert_eq!(status.budgets.len(), 1, "the team budget, offline");
    assert_eq!(status.budgets[0].currency, "CNY");
    let by_project = &status.month_to_date.by_project;
    assert_eq!(
        by_project
            .iter()
            .map(|l| (l.key.as_str(), l.amount))
            .collect::<Vec<_>>(),
        [
            ("", "20".parse().unwrap()),
            ("llm-finetune", "20".parse().unwrap())
        ],
        "spend by project: {by_project:?}"
    );
}
