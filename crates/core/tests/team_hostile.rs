//! A teammate with write access to the team database (or anyone holding its password) writes
//! rows straight into the server, past every laptop's checks. Against a real PostgreSQL
//! (`testkit::postgres`): both laptops still list, remind, sync and bill as before, and each bad
//! row is shown as unreadable (with who pushed it) or as a conflict, never written as it came.

mod team_common;

use chrono::{DateTime, Duration, TimeZone, Utc};
use leasehold_core::billing::{ledger, PowerAction};
use leasehold_core::store::Store;
use leasehold_core::team::{self, Conflict};
use leasehold_testkit::postgres::{TestPostgres, PG_PASSWORD};
use rust_decimal::Decimal;
use team_common::{joined_laptop, Laptop};

fn h(hours: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 8, 0, 0).unwrap() + Duration::hours(hours)
}

/// The laptop uid the hostile rows claim (no laptop here has it, so every pull takes them).
const MALLORY_LAPTOP: &str = "0b5d7f9a-1c3e-4a6b-8d0f-2a4c6e8b0d13";

/// Rules a `created` event brings, as a pushing laptop writes them (10 an hour while running).
fn rules_json(uid: &str, effective_from: &str) -> String {
    format!(
        r#"'{{"uid": "{uid}", "effective_from": "{effective_from}", "price_per_gpu_hour": "10",
            "gpu_count": 1, "billing_starts": "running", "stopped_billing": "none",
            "stopped_rate": null, "no_gpu_rate": null, "data_disk_per_hour": "0",
            "snapshot_per_hour": "0", "public_ip_per_hour": "0", "traffic_per_gb": "0",
            "granularity": "second", "wipe_after_stopped_days": null}}'::jsonb"#
    )
}

/// SQL for an instance of Mallory's, written straight into the server: `name`, `currency`,
/// `planned_hours` as given (SQL literals), created at `created_at`.
fn hostile_instance(
    uid: &str,
    name: &str,
    currency: &str,
    planned_hours: &str,
    created_at: &str,
) -> String {
    format!(
        "INSERT INTO instances (uid, team_id, name, provider, gpu_model, currency, planned_hours,
                                created_at, recorded_by)
         VALUES ('{uid}', 1, '{name}', 'autodl', 'A100', '{currency}', {planned_hours},
                 '{created_at}', 'mallory');"
    )
}

/// SQL for one event of Mallory's, numbered from the team's counter as a push would.
fn hostile_event(uid: &str, instance: &str, kind: &str, at: &str, rules: Option<&str>) -> String {
    format!(
        "UPDATE teams SET last_seq = last_seq + 1;
         INSERT INTO ledger_events (uid, team_id, seq, instance_uid, kind, at, recorded_by,
                                    origin_seq, laptop, rules)
         SELECT '{uid}', 1, last_seq, '{instance}', '{kind}', '{at}', 'mallory', last_seq,
                '{MALLORY_LAPTOP}', {rules} FROM teams;",
        rules = rules.unwrap_or("NULL")
    )
}

/// A `created` event of `instance` at `at`, with rules of uid `rules_uid`.
fn hostile_creation(uid: &str, instance: &str, at: &str, rules_uid: &str) -> String {
    hostile_event(
        uid,
        instance,
        "created",
        at,
        Some(&rules_json(rules_uid, at)),
    )
}

async fn sync(laptop: &Laptop, now: DateTime<Utc>) -> team::SyncReport {
    team::sync(&laptop.store, now)
        .await
        .unwrap_or_else(|err| panic!("sync goes on whatever the server holds: {err}"))
}

/// Every instance's name and bill at `now`: the list must work for all of them.
async fn bills(store: &Store, now: DateTime<Utc>) -> Vec<(String, Decimal)> {
    ledger::list(store, now)
        .await
        .expect("the instance list works")
        .into_iter()
        .map(|s| (s.name, s.total))
        .collect()
}

/// What the laptop's commands that read every instance must still do.
async fn everything_still_works(store: &Store, now: DateTime<Utc>) {
    leasehold_core::remind::due_observed(store, now)
        .await
        .expect("the reminders are still checked");
    ledger::cost(store, "shared", now)
        .await
        .expect("the shared instance's bill is still computed");
    team::status(store, now)
        .await
        .expect("the team page still opens");
}

fn unreadable_by(conflicts: &[Conflict], member: &str) -> Vec<String> {
    conflicts
        .iter()
        .filter(|c| c.kind == "unreadable" && c.member == member)
        .map(|c| c.message.clone())
        .collect()
}

/// Alice and Bob joined; Alice shares an A100 created at h(0) (10 an hour from creation) and
/// started at h(1); both synced.
async fn alice_shares_an_instance(pg: &TestPostgres) -> (Laptop, Laptop) {
    std::env::set_var("PGPASSWORD", PG_PASSWORD);
    let alice = joined_laptop(&pg.url(), "alice", h(0)).await;
    let bob = joined_laptop(&pg.url(), "bob", h(0)).await;
    ledger::add_instance(&alice.store, &team_common::rental("shared", None), h(0))
        .await
        .expect("add");
    ledger::record(&alice.store, "shared", PowerAction::Start, h(1))
        .await
        .expect("start");
    sync(&alice, h(1)).await;
    sync(&bob, h(1)).await;
    (alice, bob)
}

fn shared_uid(pg: &TestPostgres) -> String {
    pg.psql("SELECT uid FROM instances WHERE name = 'shared'")
}

#[tokio::test]
async fn bad_instances_and_offset_times_are_checked_like_local_input() {
    let pg = TestPostgres::start();
    let (alice, bob) = alice_shares_an_instance(&pg).await;
    let now = h(100);
    let before = bills(&bob.store, now).await;
    assert_eq!(before, bills(&alice.store, now).await);

    let zzz = "5f0e2a8c-3b1d-4c6e-9f7a-2d4b6c8e0a01";
    let hours = "5f0e2a8c-3b1d-4c6e-9f7a-2d4b6c8e0a02";
    let padded = "5f0e2a8c-3b1d-4c6e-9f7a-2d4b6c8e0a03";
    let offset = "5f0e2a8c-3b1d-4c6e-9f7a-2d4b6c8e0a04";
    let start = "7a1c9e3b-5d2f-4a8b-8c6d-0e2f4a6b8c05";
    let shared = shared_uid(&pg);
    pg.psql(
        &[
            // A currency nobody uses, planned hours that are no number, a name with spaces.
            hostile_instance(zzz, "zzz", "ZZZ", "NULL", "2026-03-01T08:00:00Z"),
            hostile_creation(
                "7a1c9e3b-5d2f-4a8b-8c6d-0e2f4a6b8c01",
                zzz,
                "2026-03-01T08:00:00Z",
                "9d0e1f2a-3b4c-4d5e-8f60-718293a4b501",
            ),
            hostile_instance(hours, "hours", "CNY", "'lots'", "2026-03-01T08:00:00Z"),
            hostile_creation(
                "7a1c9e3b-5d2f-4a8b-8c6d-0e2f4a6b8c02",
                hours,
                "2026-03-01T08:00:00Z",
                "9d0e1f2a-3b4c-4d5e-8f60-718293a4b502",
            ),
            hostile_instance(padded, " padded ", "CNY", "NULL", "2026-03-01T08:00:00Z"),
            hostile_creation(
                "7a1c9e3b-5d2f-4a8b-8c6d-0e2f4a6b8c03",
                padded,
                "2026-03-01T08:00:00Z",
                "9d0e1f2a-3b4c-4d5e-8f60-718293a4b503",
            ),
            // Valid times with an offset: as text, the start (10:30 UTC) sorts after the stop
            // (11:00 UTC), which made every replay of the ledger fail.
            hostile_instance(
                offset,
                "mallory-a100",
                "CNY",
                "NULL",
                "2026-03-01T09:00:00+01:00",
            ),
            hostile_creation(
                "7a1c9e3b-5d2f-4a8b-8c6d-0e2f4a6b8c04",
                offset,
                "2026-03-01T09:00:00+01:00",
                "9d0e1f2a-3b4c-4d5e-8f60-718293a4b504",
            ),
            hostile_event(start, offset, "started", "2026-03-01T11:30:00+01:00", None),
            hostile_event(
                "7a1c9e3b-5d2f-4a8b-8c6d-0e2f4a6b8c06",
                offset,
                "stopped",
                "2026-03-01T11:00:00+00:00",
                None,
            ),
            // A release, then a start after it.
            hostile_event(
                "7a1c9e3b-5d2f-4a8b-8c6d-0e2f4a6b8c08",
                offset,
                "released",
                "2026-03-01T11:30:00Z",
                None,
            ),
            hostile_event(
                "7a1c9e3b-5d2f-4a8b-8c6d-0e2f4a6b8c09",
                offset,
                "started",
                "2026-03-01T12:00:00Z",
                None,
            ),
            // A start of the shared instance while it runs.
            hostile_event(
                "7a1c9e3b-5d2f-4a8b-8c6d-0e2f4a6b8c07",
                &shared,
                "started",
                "2026-03-01T12:00:00Z",
                None,
            ),
        ]
        .concat(),
    );

    for laptop in [&alice, &bob] {
        let report = sync(laptop, now).await;
        let unreadable = unreadable_by(&report.conflicts, "mallory");
        assert_eq!(
            unreadable.len(),
            3,
            "one per bad instance: {:?}",
            report.conflicts
        );
        assert!(
            unreadable.iter().any(|m| m.contains("ZZZ")),
            "{unreadable:?}"
        );
        assert!(
            unreadable.iter().any(|m| m.contains("lots")),
            "{unreadable:?}"
        );
        assert!(
            unreadable.iter().any(|m| m.contains("spaces")),
            "{unreadable:?}"
        );
        let refused: Vec<&Conflict> = report
            .conflicts
            .iter()
            .filter(|c| c.kind == "refused_event")
            .collect();
        let mut codes: Vec<&str> = refused.iter().filter_map(|c| c.code.as_deref()).collect();
        codes.sort_unstable();
        assert_eq!(
            codes,
            ["billing.after_release", "billing.invalid_transition"],
            "the start while running and the start after release: {:?}",
            report.conflicts
        );
        assert!(refused.iter().all(|c| c.member == "mallory"));

        let mut expected = before.clone();
        // Half an hour at 10 an hour, between the real instants of the start and the stop.
        expected.push(("mallory-a100".to_owned(), Decimal::from(5)));
        assert_eq!(bills(&laptop.store, now).await, expected);
        everything_still_works(&laptop.store, now).await;
        let stored: (String, String) = sqlx::query_as(
            "SELECT e.at, i.created_at FROM ledger_events e
             JOIN instances i ON i.id = e.instance_id WHERE e.uid = ?",
        )
        .bind(start)
        .fetch_one(laptop.store.pool())
        .await
        .expect("the offset start is written");
        assert_eq!(
            stored,
            (
                "2026-03-01T10:30:00+00:00".to_owned(),
                "2026-03-01T08:00:00+00:00".to_owned()
            ),
            "times are kept in the local ledger's one UTC form"
        );
        let names: Vec<String> = sqlx::query_scalar("SELECT name FROM instances ORDER BY id")
            .fetch_all(laptop.store.pool())
            .await
            .expect("names");
        assert_eq!(
            names,
            ["shared", "mallory-a100"],
            "bad instances are never written"
        );
    }
    assert_eq!(
        sync(&bob, now).await.pulled,
        0,
        "a listed row is not pulled again"
    );
}

#[tokio::test]
async fn an_instance_this_version_cannot_bill_leaves_the_others_and_the_sync_alone() {
    let pg = TestPostgres::start();
    let (_alice, bob) = alice_shares_an_instance(&pg).await;
    let now = h(100);
    let before = bills(&bob.store, now).await;
    // A ledger from an older version, written straight into Bob's database: its rules' price
    // reads as no number here.
    {
        let mut tx = bob.store.write().await.expect("write");
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO instances (name, provider, gpu_model, currency, created_at)
             VALUES ('old-a100', 'autodl', 'A100', 'CNY', ?) RETURNING id",
        )
        .bind(h(0))
        .fetch_one(&mut *tx)
        .await
        .expect("instance");
        let rules: i64 = sqlx::query_scalar(
            "INSERT INTO billing_rules (instance_id, effective_from, price_per_gpu_hour, gpu_count,
                 billing_starts, stopped_billing, data_disk_per_hour, snapshot_per_hour,
                 public_ip_per_hour, traffic_per_gb, granularity)
             VALUES (?, ?, 'lots', 1, 'running', 'none', '0', '0', '0', '0', 'second')
             RETURNING id",
        )
        .bind(id)
        .bind(h(0))
        .fetch_one(&mut *tx)
        .await
        .expect("rules");
        let created = leasehold_core::store::ledger::EventRow {
            id: 0,
            instance_id: id,
            kind: "created".into(),
            at: h(0),
            rules_id: Some(rules),
            traffic_gb: None,
        };
        leasehold_core::store::ledger::insert_event(&mut tx, id, &created)
            .await
            .expect("created");
        tx.commit().await.expect("commit");
    }
    assert_eq!(
        bills(&bob.store, now).await,
        before,
        "the others are listed as before"
    );
    let listing = ledger::list_all(&bob.store, now).await.expect("list");
    assert_eq!(listing.broken.len(), 1);
    assert_eq!(listing.broken[0].name, "old-a100");
    assert!(
        listing.broken[0].message.contains("withdraw"),
        "{:?}",
        listing.broken
    );
    everything_still_works(&bob.store, now).await;
    let report = sync(&bob, now).await;
    let broken: Vec<&Conflict> = report
        .conflicts
        .iter()
        .filter(|c| c.kind == "broken_instance")
        .collect();
    assert_eq!(broken.len(), 1, "{:?}", report.conflicts);
    assert_eq!(broken[0].instance, "old-a100");
    assert!(broken[0].code.is_some());
}

/// SQL for a resolution of Mallory's, written straight into the server.
fn hostile_withdrawal(uid: &str, instance: &str, withdrawn: &str, kept: &str) -> String {
    format!(
        "INSERT INTO ledger_withdrawals (uid, team_id, instance_uid, event_uid, kept_uid,
                                         recorded_by, at)
         VALUES ('{uid}', 1, '{instance}', '{withdrawn}', '{kept}', 'mallory',
                 '2026-03-01T13:00:00Z');"
    )
}

#[tokio::test]
async fn resolutions_that_settle_no_conflict_found_here_are_listed_and_never_honoured() {
    let pg = TestPostgres::start();
    let (alice, bob) = alice_shares_an_instance(&pg).await;
    ledger::record(&alice.store, "shared", PowerAction::Stop, h(2))
        .await
        .expect("stop");
    sync(&alice, h(2)).await;
    let now = h(100);
    let shared = shared_uid(&pg);
    let alices = |kind: &str| {
        pg.psql(&format!(
            "SELECT uid FROM ledger_events WHERE recorded_by = 'alice' AND kind = '{kind}'"
        ))
    };
    let (start, stop) = (alices("started"), alices("stopped"));
    let other = "5f0e2a8c-3b1d-4c6e-9f7a-2d4b6c8e0a05";
    let second_stop = "7a1c9e3b-5d2f-4a8b-8c6d-0e2f4a6b8c11";
    pg.psql(
        &[
            // A conflict on the shared instance (a stop of a stopped instance), so every laptop
            // fetches the resolutions; and an instance of Mallory's own.
            hostile_event(
                second_stop,
                &shared,
                "stopped",
                "2026-03-01T11:00:00Z",
                None,
            ),
            hostile_instance(other, "mallory-a100", "CNY", "NULL", "2026-03-01T08:00:00Z"),
            hostile_creation(
                "7a1c9e3b-5d2f-4a8b-8c6d-0e2f4a6b8c12",
                other,
                "2026-03-01T08:00:00Z",
                "9d0e1f2a-3b4c-4d5e-8f60-718293a4b512",
            ),
            // Alice's stop withdrawn for an event that exists nowhere, for her own start (both here,
            // no conflict between them), and for the refused stop while naming another instance.
            hostile_withdrawal(
                "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e01",
                &shared,
                &stop,
                "3c4d5e6f-7a8b-4c9d-8e0f-000000000000",
            ),
            hostile_withdrawal(
                "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e02",
                &shared,
                &stop,
                &start,
            ),
            hostile_withdrawal(
                "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e03",
                other,
                &stop,
                second_stop,
            ),
        ]
        .concat(),
    );
    for laptop in [&alice, &bob] {
        let report = sync(laptop, now).await;
        let unreadable = unreadable_by(&report.conflicts, "mallory");
        assert_eq!(
            unreadable.len(),
            3,
            "each forged resolution: {:?}",
            report.conflicts
        );
        assert!(
            report
                .conflicts
                .iter()
                .any(|c| c.kind == "refused_event" && c.event_uid.as_deref() == Some(second_stop)),
            "the real conflict is still shown: {:?}",
            report.conflicts
        );
        let bill = ledger::cost(&laptop.store, "shared", now)
            .await
            .expect("bill")
            .total;
        assert_eq!(bill, Decimal::from(20), "Alice's stop stays in the bill");
        let honoured: i64 = sqlx::query_scalar("SELECT count(*) FROM ledger_withdrawals")
            .fetch_one(laptop.store.pool())
            .await
            .expect("count");
        assert_eq!(honoured, 0, "no forged resolution is kept");
        everything_still_works(&laptop.store, now).await;
    }
}

/// SQL for a shared record of Mallory's, numbered from the team's counter as a push would.
fn hostile_record(kind: &str, key: &str, instance: &str, body: &str) -> String {
    format!(
        "UPDATE teams SET last_seq = last_seq + 1;
         INSERT INTO shared_records (team_id, kind, key, instance_uid, body, version, laptop,
                                     recorded_by, seq)
         SELECT 1, '{kind}', '{key}', '{instance}', '{body}'::jsonb, 1, '{MALLORY_LAPTOP}',
                'mallory', last_seq FROM teams;"
    )
}

fn release_request() -> leasehold_core::release::ReleaseRequest {
    leasehold_core::release::ReleaseRequest {
        name: "shared".into(),
        confirm: "shared".into(),
        overrides: Vec::new(),
        no_check: None,
        fresh: None,
    }
}

#[tokio::test]
async fn records_dated_ahead_are_refused_and_the_release_gate_reads_only_checks_run_here() {
    let pg = TestPostgres::start();
    let (alice, bob) = alice_shares_an_instance(&pg).await;
    let now = h(4);
    // Alice's own checklist, run on her laptop at h(2): unpushed work blocks the release.
    {
        let mut conn = alice.store.pool().acquire().await.expect("conn");
        let id: i64 = sqlx::query_scalar("SELECT id FROM instances WHERE name = 'shared'")
            .fetch_one(&mut *conn)
            .await
            .expect("id");
        leasehold_core::store::backups::insert_check(
            &mut conn,
            &leasehold_core::store::backups::ReleaseCheckRow {
                id: 0,
                instance_id: id,
                at: h(2),
                blocked: true,
                checks: r#"[{"code":"git.unpushed","status":"blocked","detail":"1 commit",
                            "count":1,"items":["/root/work"]}]"#
                    .into(),
            },
        )
        .await
        .expect("check");
    }
    sync(&alice, h(2)).await;
    let shared = shared_uid(&pg);
    pg.psql(
        &[
            // A clean check and a backup "from 2099", and a clean check at h(3) with a real time.
            hostile_record(
                "release_check",
                "mallory-check-2099",
                &shared,
                r#"{"at": "2099-01-01T00:00:00Z", "blocked": false, "checks": []}"#,
            ),
            hostile_record(
                "backup",
                "mallory-backup-2099",
                &shared,
                r#"{"target": "root@gpu", "local_dir": "/x", "started_at": "2099-01-01T00:00:00Z",
                "finished_at": "2099-01-01T00:05:00Z", "files": 1, "bytes": 1, "items": []}"#,
            ),
            hostile_record(
                "release_check",
                "mallory-check-now",
                &shared,
                r#"{"at": "2026-03-01T11:00:00Z", "blocked": false, "checks": []}"#,
            ),
        ]
        .concat(),
    );
    for laptop in [&alice, &bob] {
        let report = sync(laptop, now).await;
        let unreadable = unreadable_by(&report.conflicts, "mallory");
        assert_eq!(
            unreadable.len(),
            2,
            "the two dated ahead: {:?}",
            report.conflicts
        );
        assert!(
            unreadable.iter().all(|m| m.contains("later than")),
            "{unreadable:?}"
        );
        let backups: i64 = sqlx::query_scalar("SELECT count(*) FROM backups")
            .fetch_one(laptop.store.pool())
            .await
            .expect("count");
        assert_eq!(backups, 0, "the backup from the future is not recorded");
        everything_still_works(&laptop.store, now).await;
    }
    let blocked = leasehold_core::release::release(&alice.store, release_request(), now, None)
        .await
        .expect_err("Alice's own check still blocks, whatever a pulled one says");
    assert!(
        matches!(
            blocked,
            leasehold_core::release::ReleaseError::Blocked { .. }
        ),
        "{blocked:?}"
    );
    let unchecked = leasehold_core::release::release(&bob.store, release_request(), now, None)
        .await
        .expect_err("Bob ran no check here; a pulled one never stands in for it");
    assert!(
        matches!(
            unchecked,
            leasehold_core::release::ReleaseError::NeverChecked(_)
        ),
        "{unchecked:?}"
    );
}

#[tokio::test]
async fn a_server_that_stops_answering_ends_the_sync_in_time() {
    let pg = TestPostgres::start();
    let (_alice, bob) = alice_shares_an_instance(&pg).await;
    // A server that takes the connection and never says a word.
    let stalled = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = stalled.local_addr().expect("address").port();
    let holding = std::thread::spawn(move || stalled.accept().map(|(conn, _)| conn));
    sqlx::query("UPDATE team_link SET url = ?")
        .bind(format!(
            "postgres://leasehold@127.0.0.1:{port}/team?sslmode=disable"
        ))
        .execute(bob.store.pool())
        .await
        .expect("point the link at it");
    let err = team::sync_within(&bob.store, h(100), std::time::Duration::from_secs(2))
        .await
        .expect_err("the sync gives up");
    // Its own limit, shorter than the connect timeout (which would say `Unreachable`).
    assert!(
        matches!(err, team::TeamError::TimedOut { seconds: 2 }),
        "{err:?}"
    );
    drop(holding);
}
