//! Resolving a team conflict against a real PostgreSQL server (`testkit::postgres`): two laptops
//! release one shared instance while offline; each is shown the refused release with the one
//! standing in its place; a member keeps one (a new, shared record — the events stay untouched)
//! and after a sync both laptops compute the same bill from the kept release with no conflict
//! left; two members choosing opposite ways before syncing end with the earlier choice on both.
//! Rows on the server this version cannot read (written there by anyone) are listed, never
//! written into the ledger.

mod team_common;

use chrono::{DateTime, Duration, TimeZone, Utc};
use leasehold_core::billing::{ledger, PowerAction};
use leasehold_core::store::Store;
use leasehold_core::team::{self, TeamError};
use leasehold_testkit::postgres::{TestPostgres, PG_PASSWORD};
use rust_decimal::Decimal;
use team_common::{joined_laptop, Laptop};

fn h(hours: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 8, 0, 0).unwrap() + Duration::hours(hours)
}

async fn laptop(url: &str, member: &str) -> Laptop {
    joined_laptop(url, member, h(0)).await
}

async fn sync(laptop: &Laptop) -> team::SyncReport {
    team::sync(&laptop.store, h(100))
        .await
        .unwrap_or_else(|err| panic!("sync: {err}"))
}

async fn bill(store: &Store) -> Decimal {
    let all = ledger::list(store, h(100)).await.expect("list");
    assert_eq!(all.len(), 1, "one shared instance");
    all[0].total
}

async fn event_count(store: &Store) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM ledger_events")
        .fetch_one(store.pool())
        .await
        .expect("count events")
}

/// Alice and Bob joined; Alice creates the shared A100 (10 an hour from h(0)) and syncs.
async fn alice_shares_an_instance(pg: &TestPostgres) -> (Laptop, Laptop) {
    // Syncs after `connect` read the password as libpq would (no keychain here).
    std::env::set_var("PGPASSWORD", PG_PASSWORD);
    let (alice, bob) = (
        laptop(&pg.url(), "alice").await,
        laptop(&pg.url(), "bob").await,
    );
    let rental = team_common::rental("shared", None);
    ledger::add_instance(&alice.store, &rental, h(0))
        .await
        .expect("add");
    sync(&alice).await;
    (alice, bob)
}

/// The shared A100 of [`alice_shares_an_instance`]; both release it while offline, Alice at
/// h(2), Bob at h(3); everyone syncs.
async fn two_releases(pg: &TestPostgres) -> (Laptop, Laptop) {
    let (alice, bob) = alice_shares_an_instance(pg).await;
    sync(&bob).await;
    ledger::record(&alice.store, "shared", PowerAction::Release, h(2))
        .await
        .expect("alice releases");
    ledger::record(&bob.store, "shared", PowerAction::Release, h(3))
        .await
        .expect("bob releases");
    sync(&alice).await;
    sync(&bob).await;
    sync(&alice).await;
    (alice, bob)
}

#[tokio::test]
async fn keeping_the_later_release_is_shared_and_both_laptops_bill_until_it() {
    let pg = TestPostgres::start();
    let (alice, bob) = two_releases(&pg).await;

    let shown = team::conflicts::conflicts(&alice.store)
        .await
        .expect("conflicts");
    assert_eq!(
        shown.len(),
        1,
        "Alice is shown the second release: {shown:?}"
    );
    let conflict = &shown[0];
    assert_eq!(conflict.member, "bob");
    assert_eq!(conflict.at, Some(h(3)));
    let standing = conflict
        .standing
        .as_ref()
        .expect("the release in the bill is named");
    assert_eq!(standing.member, "alice");
    assert_eq!(standing.event_kind, "released");
    assert_eq!(standing.at, h(2));
    assert_eq!(
        bill(&alice.store).await,
        Decimal::from(20),
        "billed until Alice's release"
    );

    // Bob knows he released it at h(3): he keeps his.
    let bobs = conflict.event_uid.clone().expect("the refused event's uid");
    let left = team::conflicts::resolve(&bob.store, &bobs, &bobs, h(101))
        .await
        .expect("resolve");
    assert!(left.is_empty(), "settled on Bob's laptop at once: {left:?}");
    assert_eq!(
        bill(&bob.store).await,
        Decimal::from(30),
        "billed until Bob's release"
    );

    let again = team::conflicts::resolve(&bob.store, &bobs, &bobs, h(102)).await;
    assert!(
        matches!(again, Err(TeamError::ConflictGone)),
        "a settled conflict cannot be settled twice: {again:?}"
    );

    let bob_report = sync(&bob).await;
    let alice_report = sync(&alice).await;
    assert!(
        bob_report.conflicts.is_empty(),
        "{:?}",
        bob_report.conflicts
    );
    assert!(
        alice_report.conflicts.is_empty(),
        "Bob's choice reached Alice: {:?}",
        alice_report.conflicts
    );
    assert_eq!(bill(&alice.store).await, Decimal::from(30));
    assert_eq!(bill(&alice.store).await, bill(&bob.store).await, "one bill");
    for store in [&alice.store, &bob.store] {
        assert_eq!(
            event_count(store).await,
            3,
            "both releases stay in the ledger; only the replay leaves one out"
        );
    }
}

#[tokio::test]
async fn opposite_choices_made_offline_settle_on_the_earlier_one_everywhere() {
    let pg = TestPostgres::start();
    let (alice, bob) = two_releases(&pg).await;
    let conflict = team::conflicts::conflicts(&alice.store)
        .await
        .expect("conflicts")[0]
        .clone();
    let bobs = conflict.event_uid.clone().expect("refused uid");
    let alices = conflict.standing.clone().expect("standing").event_uid;

    // Each keeps their own, before either syncs; Alice decided first.
    team::conflicts::resolve(&alice.store, &bobs, &alices, h(101))
        .await
        .expect("alice resolves");
    team::conflicts::resolve(&bob.store, &bobs, &bobs, h(102))
        .await
        .expect("bob resolves");
    sync(&alice).await;
    sync(&bob).await;
    let alice_report = sync(&alice).await;
    assert!(
        alice_report.conflicts.is_empty(),
        "{:?}",
        alice_report.conflicts
    );
    assert!(sync(&bob).await.conflicts.is_empty());
    assert_eq!(
        bill(&alice.store).await,
        Decimal::from(20),
        "the earlier choice (Alice's release) stands"
    );
    assert_eq!(bill(&bob.store).await, Decimal::from(20), "on both laptops");
}

#[tokio::test]
async fn rows_on_the_server_this_version_cannot_read_are_listed_and_never_written() {
    let pg = TestPostgres::start();
    let (alice, bob) = alice_shares_an_instance(&pg).await;
    // Written straight into the team database, past any laptop's checks: an instance with a
    // blank name and an event of it, and an event of the shared instance with a broken time.
    pg.psql(
        "INSERT INTO instances (uid, team_id, name, provider, gpu_model, currency, created_at,
                                recorded_by)
         VALUES ('5f0e2a8c-3b1d-4c6e-9f7a-2d4b6c8e0a11', 1, '   ', 'autodl', 'A100', 'CNY',
                 '2026-03-01T08:00:00Z', 'mallory');
         UPDATE teams SET last_seq = last_seq + 2;
         INSERT INTO ledger_events (uid, team_id, seq, instance_uid, kind, at, recorded_by,
                                    origin_seq, laptop)
         SELECT '7a1c9e3b-5d2f-4a8b-8c6d-0e2f4a6b8c01', 1, last_seq - 1,
                '5f0e2a8c-3b1d-4c6e-9f7a-2d4b6c8e0a11', 'started', '2026-03-01T09:00:00Z',
                'mallory', 1, '0b5d7f9a-1c3e-4a6b-8d0f-2a4c6e8b0d13'
         FROM teams;
         INSERT INTO ledger_events (uid, team_id, seq, instance_uid, kind, at, recorded_by,
                                    origin_seq, laptop)
         SELECT '7a1c9e3b-5d2f-4a8b-8c6d-0e2f4a6b8c02', 1, t.last_seq, i.uid, 'stopped',
                'not a time', 'mallory', 2, '0b5d7f9a-1c3e-4a6b-8d0f-2a4c6e8b0d13'
         FROM teams t, instances i WHERE i.name = 'shared'",
    );
    let report = sync(&bob).await;
    assert_eq!(
        report.pulled, 1,
        "only the shared instance's creation is taken"
    );
    let mut unreadable: Vec<&str> = report
        .conflicts
        .iter()
        .filter(|c| c.kind == "unreadable")
        .map(|c| c.message.as_str())
        .collect();
    unreadable.sort_unstable();
    assert_eq!(unreadable.len(), 2, "{:?}", report.conflicts);
    assert!(unreadable[0].contains("not a time"), "{unreadable:?}");
    assert!(unreadable[1].contains("blank"), "{unreadable:?}");
    assert_eq!(event_count(&bob.store).await, 1);
    assert_eq!(bill(&bob.store).await, bill(&alice.store).await);
    assert_eq!(
        sync(&bob).await.pulled,
        0,
        "a listed row is not pulled again"
    );
}
