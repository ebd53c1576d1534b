//! Team mode against a real PostgreSQL server (`testkit::postgres`): two laptops (two SQLite
//! files) record events for shared and separate instances, offline and online, sync in either
//! order, and both compute the same bills as one database that recorded every event itself; a
//! link cut mid-push or mid-pull loses and doubles nothing; a conflicting release is reported;
//! a newer server schema and a wrong password are refused with the local ledger untouched.

use chrono::{DateTime, Duration, TimeZone, Utc};
use leasehold_core::billing::{ledger, BillingRules, NewInstance, PowerAction};
use leasehold_core::ssh::Secret;
use leasehold_core::store::Store;
use leasehold_core::team::{self, ConnectRequest, TeamError};
use leasehold_testkit::postgres::{TestPostgres, PG_PASSWORD};
use leasehold_testkit::tcp_proxy::{TcpProxy, Trip};
use rust_decimal::Decimal;

fn h(hours: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 8, 0, 0).unwrap() + Duration::hours(hours)
}

fn later() -> DateTime<Utc> {
    h(100)
}

struct Laptop {
    _dir: tempfile::TempDir,
    store: Store,
}

async fn laptop() -> Laptop {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&dir.path().join("ledger.sqlite3"))
        .await
        .expect("open the laptop's database");
    Laptop { _dir: dir, store }
}

fn request(url: &str, member: &str, password: &str) -> ConnectRequest {
    ConnectRequest {
        url: url.to_owned(),
        member: member.to_owned(),
        team: "lab".to_owned(),
        password: Some(Secret::new(password)),
    }
}

/// Later syncs read the password as libpq would when no keychain is available (as here).
fn use_libpq_password() {
    std::env::set_var("PGPASSWORD", PG_PASSWORD);
}

async fn join(laptop: &Laptop, url: &str, member: &str) {
    team::connect(&laptop.store, request(url, member, PG_PASSWORD), h(0))
        .await
        .unwrap_or_else(|err| panic!("{member} joins the team: {err}"));
}

fn rental(name: &str, gpu: &str, price: &str) -> NewInstance {
    let mut rules = BillingRules::simple(price.parse().unwrap(), 1);
    // Traffic costs money, so a bill that missed a merged traffic event would differ.
    rules.traffic_per_gb = "0.8".parse().unwrap();
    NewInstance {
        name: name.to_owned(),
        provider: "autodl".to_owned(),
        region: None,
        gpu_model: gpu.to_owned(),
        currency: "CNY".to_owned(),
        notes: None,
        planned_hours: None,
        budget: None,
        rules,
    }
}

async fn add(store: &Store, name: &str, gpu: &str, price: &str, at: DateTime<Utc>) {
    ledger::add_instance(store, &rental(name, gpu, price), at)
        .await
        .unwrap_or_else(|err| panic!("add {name}: {err}"));
}

async fn power(store: &Store, name: &str, action: PowerAction, at: DateTime<Utc>) {
    ledger::record(store, name, action, at)
        .await
        .unwrap_or_else(|err| panic!("{action:?} {name}: {err}"));
}

async fn sync(laptop: &Laptop) -> team::SyncReport {
    team::sync(&laptop.store, later())
        .await
        .unwrap_or_else(|err| panic!("sync: {err}"))
}

/// Every instance's bill as (name, total, state) at `later()`, sorted by name.
async fn bills(store: &Store) -> Vec<(String, Decimal, String)> {
    let mut bills: Vec<_> = ledger::list(store, later())
        .await
        .expect("list")
        .into_iter()
        .map(|s| (s.name, s.total, format!("{:?}", s.state)))
        .collect();
    bills.sort();
    bills
}

async fn event_count(store: &Store) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM ledger_events")
        .fetch_one(store.pool())
        .await
        .expect("count events")
}

/// The reference: one database that recorded every event itself, in time order.
async fn reference() -> Laptop {
    let one = laptop().await;
    let s = &one.store;
    add(s, "shared-a100", "A100", "10", h(0)).await;
    power(s, "shared-a100", PowerAction::Start, h(1)).await;
    add(s, "bob-4090", "RTX 4090", "2.5", h(1)).await;
    add(s, "alice-h100", "H100", "20", h(2)).await;
    power(s, "bob-4090", PowerAction::Start, h(2)).await;
    ledger::record_traffic(s, "shared-a100", "4".parse().unwrap(), h(2))
        .await
        .expect("traffic");
    power(s, "shared-a100", PowerAction::Stop, h(3)).await;
    power(s, "alice-h100", PowerAction::Release, h(4)).await;
    power(s, "bob-4090", PowerAction::Stop, h(5)).await;
    one
}

/// Alice and Bob record the reference's events between them, partly offline; `bob_first`
/// chooses who syncs first once both are back.
async fn two_laptops(bob_first: bool) {
    use_libpq_password();
    let pg = TestPostgres::start();
    let (alice, bob) = (laptop().await, laptop().await);
    join(&alice, &pg.url(), "alice").await;
    join(&bob, &pg.url(), "bob").await;

    // Online: Alice records the shared instance and both sync.
    add(&alice.store, "shared-a100", "A100", "10", h(0)).await;
    power(&alice.store, "shared-a100", PowerAction::Start, h(1)).await;
    let first = sync(&alice).await;
    assert_eq!(first.pushed, 2, "created and started reach the server");
    let pulled = sync(&bob).await;
    assert_eq!(pulled.pulled, 2, "Bob sees Alice's shared instance");

    // Offline: both record on the shared instance and on their own.
    add(&bob.store, "bob-4090", "RTX 4090", "2.5", h(1)).await;
    add(&alice.store, "alice-h100", "H100", "20", h(2)).await;
    power(&bob.store, "bob-4090", PowerAction::Start, h(2)).await;
    ledger::record_traffic(&bob.store, "shared-a100", "4".parse().unwrap(), h(2))
        .await
        .expect("Bob records traffic on the shared instance");
    power(&alice.store, "shared-a100", PowerAction::Stop, h(3)).await;
    power(&alice.store, "alice-h100", PowerAction::Release, h(4)).await;
    power(&bob.store, "bob-4090", PowerAction::Stop, h(5)).await;

    let (one, other) = if bob_first {
        (&bob, &alice)
    } else {
        (&alice, &bob)
    };
    sync(one).await;
    sync(other).await;
    let last = sync(one).await;
    assert!(
        last.conflicts.is_empty(),
        "nothing conflicts: {:?}",
        last.conflicts
    );

    let expected = bills(&reference().await.store).await;
    assert_eq!(
        bills(&alice.store).await,
        expected,
        "Alice's bills equal one database's"
    );
    assert_eq!(
        bills(&bob.store).await,
        expected,
        "Bob's bills equal one database's"
    );
    assert_eq!(event_count(&alice.store).await, 9);
    assert_eq!(event_count(&bob.store).await, 9);
    assert_eq!(
        pg.psql("SELECT count(*) FROM ledger_events"),
        "9",
        "each event once on the server"
    );
}

#[tokio::test]
async fn two_laptops_compute_one_databases_bills_when_alice_syncs_first() {
    two_laptops(false).await;
}

#[tokio::test]
async fn two_laptops_compute_one_databases_bills_when_bob_syncs_first() {
    two_laptops(true).await;
}

#[tokio::test]
async fn a_second_release_is_reported_on_both_laptops_and_billed_once() {
    use_libpq_password();
    let pg = TestPostgres::start();
    let (alice, bob) = (laptop().await, laptop().await);
    join(&alice, &pg.url(), "alice").await;
    join(&bob, &pg.url(), "bob").await;
    add(&alice.store, "shared", "A100", "10", h(0)).await;
    sync(&alice).await;
    sync(&bob).await;
    // Both release it while offline, at different times.
    power(&alice.store, "shared", PowerAction::Release, h(2)).await;
    power(&bob.store, "shared", PowerAction::Release, h(3)).await;
    sync(&alice).await;
    let bob_report = sync(&bob).await;
    let alice_report = sync(&alice).await;
    for (who, report) in [("Alice", &alice_report), ("Bob", &bob_report)] {
        assert_eq!(
            report.conflicts.len(),
            1,
            "{who} is shown the second release: {:?}",
            report.conflicts
        );
        let conflict = &report.conflicts[0];
        assert_eq!(conflict.kind, "refused_event");
        assert_eq!(conflict.event_kind.as_deref(), Some("released"));
        assert_eq!(
            conflict.member, "bob",
            "the later release is the refused one"
        );
        assert_eq!(conflict.code.as_deref(), Some("billing.after_release"));
    }
    let alice_bill = bills(&alice.store).await;
    assert_eq!(alice_bill, bills(&bob.store).await, "both bill the same");
    assert_eq!(
        alice_bill[0].1,
        "20".parse::<Decimal>().unwrap(),
        "billed until the first release"
    );
    assert_eq!(
        event_count(&bob.store).await,
        3,
        "the refused release is kept, not dropped"
    );
}

/// Record `instances` rentals with a start and a stop each on `store`.
async fn busy_laptop(store: &Store, prefix: &str, instances: i64) {
    for i in 0..instances {
        let name = format!("{prefix}-{i}");
        add(store, &name, "RTX 4090", "2", h(0)).await;
        power(store, &name, PowerAction::Start, h(1)).await;
        power(store, &name, PowerAction::Stop, h(2)).await;
    }
}

#[tokio::test]
async fn a_link_cut_mid_push_loses_nothing_and_doubles_nothing() {
    use_libpq_password();
    let pg = TestPostgres::start();
    let proxy = TcpProxy::start(([127, 0, 0, 1], pg.port()).into());
    let (alice, bob) = (laptop().await, laptop().await);
    join(&alice, &pg.url_on(proxy.port()), "alice").await;
    join(&bob, &pg.url(), "bob").await;
    busy_laptop(&alice.store, "a", 100).await;

    // The push request goes out whole; the connection dies as the server answers.
    proxy.arm(Trip {
        client_bytes: 20_000,
        server_bytes: 0,
    });
    let cut = team::sync(&alice.store, later()).await;
    assert!(proxy.tripped(), "the proxy cut the push");
    assert!(cut.is_err(), "a cut sync fails: {cut:?}");
    assert_eq!(
        event_count(&alice.store).await,
        300,
        "nothing local changed"
    );

    let again = sync(&alice).await;
    assert!(again.pushed <= 300, "never more than recorded: {again:?}");
    assert_eq!(
        pg.psql("SELECT count(*) FROM ledger_events"),
        "300",
        "every event once on the server"
    );
    let bob_report = sync(&bob).await;
    assert_eq!(bob_report.pulled, 300);
    assert_eq!(bills(&bob.store).await, bills(&alice.store).await);
}

#[tokio::test]
async fn a_link_cut_mid_pull_loses_nothing_and_doubles_nothing() {
    use_libpq_password();
    let pg = TestPostgres::start();
    let proxy = TcpProxy::start(([127, 0, 0, 1], pg.port()).into());
    let (alice, bob) = (laptop().await, laptop().await);
    join(&alice, &pg.url(), "alice").await;
    join(&bob, &pg.url_on(proxy.port()), "bob").await;
    busy_laptop(&alice.store, "a", 100).await;
    sync(&alice).await;

    // Bob's pull page starts arriving, then the link drops.
    proxy.arm(Trip {
        client_bytes: 0,
        server_bytes: 30_000,
    });
    let cut = team::sync(&bob.store, later()).await;
    assert!(proxy.tripped(), "the proxy cut the pull");
    assert!(cut.is_err(), "a cut sync fails: {cut:?}");
    assert_eq!(
        event_count(&bob.store).await,
        0,
        "a half page is not applied"
    );

    let again = sync(&bob).await;
    assert_eq!(again.pulled, 300);
    assert_eq!(event_count(&bob.store).await, 300, "each event once");
    assert_eq!(sync(&bob).await.pulled, 0, "nothing is pulled twice");
    assert_eq!(bills(&bob.store).await, bills(&alice.store).await);
}

#[tokio::test]
async fn a_shared_instance_whose_name_is_taken_here_is_kept_under_another_name_and_reported() {
    use_libpq_password();
    let pg = TestPostgres::start();
    let (alice, bob) = (laptop().await, laptop().await);
    join(&alice, &pg.url(), "alice").await;
    join(&bob, &pg.url(), "bob").await;
    add(&alice.store, "gpu-1", "A100", "10", h(0)).await;
    add(&bob.store, "gpu-1", "RTX 4090", "2", h(0)).await;
    sync(&alice).await;
    let report = sync(&bob).await;
    assert_eq!(report.pulled, 1);
    let collision = report
        .conflicts
        .iter()
        .find(|c| c.kind == "name_collision")
        .unwrap_or_else(|| panic!("the collision is reported: {:?}", report.conflicts));
    assert_eq!(collision.instance, "gpu-1@alice");
    let names: Vec<String> = bills(&bob.store).await.into_iter().map(|b| b.0).collect();
    assert_eq!(names, ["gpu-1", "gpu-1@alice"], "both instances are kept");

    // Once read, the notice is dismissed on this laptop: kept, no longer listed, not brought
    // back by the next sync; a second dismissal finds nothing.
    let key = collision.key.clone().expect("a stored notice has a key");
    let left = team::conflicts::dismiss(&bob.store, &key, later())
        .await
        .expect("dismiss");
    assert!(!left.iter().any(|c| c.kind == "name_collision"), "{left:?}");
    assert!(sync(&bob).await.conflicts.is_empty());
    let err = team::conflicts::dismiss(&bob.store, &key, later())
        .await
        .expect_err("already dismissed");
    assert!(matches!(err, TeamError::ConflictGone), "{err}");
    let kept: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM team_conflicts WHERE key = ? AND dismissed_at IS NOT NULL",
    )
    .bind(&key)
    .fetch_one(bob.store.pool())
    .await
    .expect("count");
    assert_eq!(kept, 1, "the notice is kept, dismissed");
}

#[tokio::test]
async fn a_server_schema_newer_than_this_build_is_refused_and_nothing_is_written() {
    use_libpq_password();
    let pg = TestPostgres::start();
    let alice = laptop().await;
    join(&alice, &pg.url(), "alice").await;
    add(&alice.store, "gpu", "A100", "10", h(0)).await;
    pg.psql(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
         VALUES (99990101000000, 'from a newer Leasehold', true, '\\x00', 0)",
    );
    let err = team::sync(&alice.store, later())
        .await
        .expect_err("refused");
    assert!(matches!(err, TeamError::NewerSchema { .. }), "{err}");
    assert!(
        err.to_string().contains("newer Leasehold"),
        "the message says why: {err}"
    );
    assert_eq!(
        pg.psql("SELECT count(*) FROM ledger_events"),
        "0",
        "nothing was pushed"
    );

    let bob = laptop().await;
    let err = team::connect(&bob.store, request(&pg.url(), "bob", PG_PASSWORD), h(0))
        .await
        .expect_err("a new member is refused too");
    assert!(matches!(err, TeamError::NewerSchema { .. }), "{err}");
    assert!(
        team::link(&bob.store).await.unwrap().is_none(),
        "no link was written"
    );
}

#[tokio::test]
async fn a_wrong_password_or_an_unreachable_server_writes_nothing() {
    let pg = TestPostgres::start();
    let alice = laptop().await;
    add(&alice.store, "gpu", "A100", "10", h(0)).await;
    let err = team::connect(
        &alice.store,
        request(&pg.url(), "alice", "not-the-password"),
        h(0),
    )
    .await
    .expect_err("wrong password");
    assert!(matches!(err, TeamError::WrongPassword { .. }), "{err}");
    assert!(
        !err.to_string().contains("not-the-password"),
        "never echo the password: {err}"
    );

    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = team::connect(
        &alice.store,
        request(
            &format!("postgres://leasehold@127.0.0.1:{closed}/team"),
            "alice",
            PG_PASSWORD,
        ),
        h(0),
    )
    .await
    .expect_err("nothing listens there");
    assert!(matches!(err, TeamError::Unreachable { .. }), "{err}");
    assert!(
        team::link(&alice.store).await.unwrap().is_none(),
        "no link was written"
    );
    assert_eq!(
        event_count(&alice.store).await,
        1,
        "the ledger is untouched"
    );
}

/// Every uid minted here is a UUIDv7 carrying the time it was minted, so one minted later sorts
/// after: the uid indexes, here and on the team server, take new rows at their end.
#[tokio::test]
async fn uids_minted_here_are_time_ordered() {
    let one = laptop().await;
    add(&one.store, "first", "A100", "10", h(0)).await;
    // The next uids fall in a later millisecond.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    add(&one.store, "second", "A100", "10", h(0)).await;
    power(&one.store, "second", PowerAction::Start, h(1)).await;
    let now = leasehold_core::clock::Clock::now(&leasehold_core::clock::SystemClock).timestamp();
    let now = u64::try_from(now).expect("after 1970");
    for table in ["instances", "billing_rules", "ledger_events"] {
        let uids: Vec<String> = sqlx::query_scalar(&format!("SELECT uid FROM {table} ORDER BY id"))
            .fetch_all(one.store.pool())
            .await
            .expect("uids");
        assert!(uids.len() >= 2, "{table}: {uids:?}");
        for uid in &uids {
            let parsed = uuid::Uuid::parse_str(uid).expect("a UUID");
            assert_eq!(parsed.get_version_num(), 7, "{table}: {uid}");
            let (minted, _) = parsed.get_timestamp().expect("v7 has a time").to_unix();
            assert!(
                minted.abs_diff(now) < 300,
                "{table}: {uid} minted at {minted}, now {now}"
            );
        }
        assert!(uids.first() < uids.last(), "{table}: {uids:?}");
    }
}

/// Each event recorded here carries the member the laptop is linked as (none before it joins
/// a team) and its order on this laptop, which is its own id: the team orders events recorded
/// at the same time by them.
#[tokio::test]
async fn an_event_recorded_here_carries_its_member_and_its_order_on_this_laptop() {
    let pg = TestPostgres::start();
    let alice = laptop().await;
    add(&alice.store, "early", "A100", "10", h(0)).await;
    join(&alice, &pg.url(), "alice").await;
    add(&alice.store, "late", "A100", "10", h(0)).await;
    power(&alice.store, "late", PowerAction::Start, h(1)).await;
    power(&alice.store, "late", PowerAction::Stop, h(2)).await;
    let rows: Vec<(i64, String, Option<String>, Option<i64>)> = sqlx::query_as(
        "SELECT e.id, i.name, e.recorded_by, e.origin_seq
         FROM ledger_events e JOIN instances i ON i.id = e.instance_id ORDER BY e.id",
    )
    .fetch_all(alice.store.pool())
    .await
    .expect("events");
    assert_eq!(rows.len(), 4, "{rows:?}");
    for (id, name, recorded_by, origin_seq) in &rows {
        assert_eq!(*origin_seq, Some(*id), "{rows:?}");
        // Joining names the member on what was recorded before it.
        assert_eq!(recorded_by.as_deref(), Some("alice"), "{name}: {rows:?}");
    }
}

/// What a push delivered stays delivered across a disconnect and a reconnect to the same team
/// (nothing is sent again), and a different team gets the whole ledger.
#[tokio::test]
async fn pushed_events_stay_pushed_after_a_disconnect_and_a_new_team_gets_them_all() {
    use_libpq_password();
    let pg = TestPostgres::start();
    let alice = laptop().await;
    add(&alice.store, "gpu", "A100", "10", h(0)).await;
    power(&alice.store, "gpu", PowerAction::Start, h(1)).await;
    join(&alice, &pg.url(), "alice").await;
    let first = team::sync(&alice.store, later()).await.expect("sync");
    assert_eq!(first.pushed, 2);
    let unflagged = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM ledger_events WHERE shared = 0")
            .fetch_one(alice.store.pool())
            .await
            .expect("count")
    };

    team::disconnect(&alice.store).await.expect("disconnect");
    assert_eq!(unflagged().await, 0, "disconnecting keeps what was pushed");
    join(&alice, &pg.url(), "alice").await;
    power(&alice.store, "gpu", PowerAction::Stop, h(2)).await;
    let again = team::sync(&alice.store, later()).await.expect("sync again");
    assert_eq!(again.pushed, 1, "only the new event travels");
    assert_eq!(pg.psql("SELECT count(*) FROM ledger_events"), "3");

    let mut other = request(&pg.url(), "alice", PG_PASSWORD);
    other.team = "another lab".to_owned();
    team::connect(&alice.store, other, h(3))
        .await
        .expect("join another team");
    assert_eq!(unflagged().await, 3, "a new team gets the whole ledger");
}
