//! Team mode's large-batch push (`COPY` into a staging table, `team::push::COPY_FROM` events or
//! more) against a real PostgreSQL server: a second laptop pulls exactly the events and bills of
//! the laptop that recorded them; hostile text survives the trip byte for byte; a link cut in the
//! middle of the `COPY` leaves nothing on the server and a second push sends everything once.

mod team_common;

use chrono::{DateTime, Duration, TimeZone, Utc};
use leasehold_core::billing::{ledger, BillingRules, NewInstance, PowerAction};
use leasehold_core::store::Store;
use leasehold_core::team;
use leasehold_testkit::postgres::TestPostgres;
use leasehold_testkit::tcp_proxy::{TcpProxy, Trip};
use rust_decimal::Decimal;
use team_common::{laptop, Laptop};

/// Instances of the busy laptop; three events each, enough for the `COPY` path.
const INSTANCES: i64 = 350;
const EVENTS: i64 = INSTANCES * 3;

fn h(hours: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 8, 0, 0).unwrap() + Duration::hours(hours)
}

fn later() -> DateTime<Utc> {
    h(100)
}

async fn join(laptop: &Laptop, url: &str, member: &str) {
    team_common::join(laptop, url, member, h(0)).await;
}

/// Text another member's laptop might send: everything a text or CSV `COPY` would have to
/// escape, and more.
const HOSTILE: [&str; 8] = [
    "tab\there",
    "two\nlines\r\nand a CR\r",
    "back\\slash \\N \\t \\\\",
    "\\N",
    "\"quoted\", 'single' ,comma",
    "",
    "算力租用 🚀 e\u{301} \u{202e}rtl",
    "end with backslash\\",
];

/// `instances` rentals with a start and a stop each; hostile names, notes and regions on some.
async fn busy_laptop(store: &Store, instances: i64) {
    for i in 0..instances {
        let mut rules = BillingRules::simple("2".parse().unwrap(), 1);
        rules.traffic_per_gb = "0.8".parse().unwrap();
        let name = format!("a-{i}");
        let rental = NewInstance {
            name: name.clone(),
            provider: "autodl".to_owned(),
            region: None,
            gpu_model: "RTX 4090".to_owned(),
            currency: "CNY".to_owned(),
            notes: None,
            planned_hours: None,
            budget: None,
            rules,
        };
        ledger::add_instance(store, &rental, h(0))
            .await
            .expect("add");
        ledger::record(
            store,
            &name,
            PowerAction::Start,
            h(1) + Duration::minutes(i),
        )
        .await
        .expect("start");
        ledger::record(store, &name, PowerAction::Stop, h(2) + Duration::minutes(i))
            .await
            .expect("stop");
    }
    // Written as raw rows: the team gets whatever a laptop's database holds, not only what
    // this version's forms accept. Names keep to the one rule every laptop checks a pulled name
    // against (no control characters; `team_hostile` shows such a row refused), notes and
    // regions carry the raw text.
    for (i, text) in HOSTILE.iter().enumerate() {
        sqlx::query("UPDATE instances SET name = ?, notes = ?, region = ? WHERE name = ?")
            .bind(format!("{}#{i}", text.replace(char::is_control, " ")))
            // An empty note or region is stored as none, here as on every laptop.
            .bind(Some(*text).filter(|t| !t.is_empty()))
            .bind(Some(*text).filter(|t| !t.is_empty()))
            .bind(format!("a-{i}"))
            .execute(store.pool())
            .await
            .expect("hostile text");
    }
}

/// Every instance as (uid, name, notes, region, provider, created_at), sorted.
async fn instances(store: &Store) -> Vec<(String, String, Option<String>, Option<String>, String)> {
    sqlx::query_as(
        "SELECT uid, name, notes, region, CAST(created_at AS TEXT) FROM instances ORDER BY uid",
    )
    .fetch_all(store.pool())
    .await
    .expect("instances")
}

/// Every event as the team knows it (uid, instance, kind, time, member, origin), sorted.
async fn events(
    store: &Store,
) -> Vec<(String, String, String, String, Option<String>, Option<i64>)> {
    sqlx::query_as(
        "SELECT e.uid, i.uid, e.kind, CAST(e.at AS TEXT), e.recorded_by, e.origin_seq
         FROM ledger_events e JOIN instances i ON i.id = e.instance_id ORDER BY e.uid",
    )
    .fetch_all(store.pool())
    .await
    .expect("events")
}

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

/// The hostile names, notes and regions of [`busy_laptop`] are on `store`, byte for byte.
async fn hostile_text_arrived(store: &Store) {
    let names = instances(store).await;
    for (i, text) in HOSTILE.iter().enumerate() {
        let name = format!("{}#{i}", text.replace(char::is_control, " "));
        let row = names
            .iter()
            .find(|r| r.1 == name)
            .expect("hostile name arrived");
        let expected = Some(*text).filter(|t| !t.is_empty());
        assert_eq!(row.2.as_deref(), expected, "notes byte-exact");
        assert_eq!(row.3.as_deref(), expected, "region byte-exact");
    }
}

async fn event_count(store: &Store) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM ledger_events")
        .fetch_one(store.pool())
        .await
        .expect("count")
}

#[tokio::test]
async fn a_long_pull_in_growing_pages_survives_a_cut_and_brings_each_event_once_byte_exact() {
    let pg = TestPostgres::start();
    let proxy = TcpProxy::start(([127, 0, 0, 1], pg.port()).into());
    let (alice, bob) = (laptop().await, laptop().await);
    join(&alice, &pg.url(), "alice").await;
    join(&bob, &pg.url_on(proxy.port()), "bob").await;
    // The first page comes back full, so larger pages follow; the hostile text is in the last.
    team_common::bulk_ledger(&alice.store, 60, 100, h(0)).await;
    busy_laptop(&alice.store, 20).await;
    let total = 60 * 100 + 20 * 3;
    assert!(
        total > 2 * team::pull::FIRST_PAGE,
        "the pull must take several pages"
    );
    let pushed = team::sync(&alice.store, later())
        .await
        .expect("alice syncs");
    assert_eq!(pushed.pushed, total);

    // The first page is about 400 kB; the link drops inside the (twice as large) second.
    proxy.arm(Trip {
        client_bytes: 0,
        server_bytes: 700_000,
    });
    let cut = team::sync(&bob.store, later()).await;
    assert!(proxy.tripped(), "the proxy cut the pull");
    assert!(cut.is_err(), "a cut sync fails: {cut:?}");
    assert_eq!(
        event_count(&bob.store).await,
        team::pull::FIRST_PAGE,
        "the first page stays, whole; nothing of the cut one"
    );

    let pulled = team::sync(&bob.store, later()).await.expect("bob syncs");
    assert_eq!(pulled.pulled, total - team::pull::FIRST_PAGE);
    assert!(pulled.conflicts.is_empty(), "{:?}", pulled.conflicts);
    assert_eq!(instances(&bob.store).await, instances(&alice.store).await);
    assert_eq!(events(&bob.store).await, events(&alice.store).await);
    assert_eq!(bills(&bob.store).await, bills(&alice.store).await);
    hostile_text_arrived(&bob.store).await;
    assert_eq!(team::sync(&bob.store, later()).await.unwrap().pulled, 0);
}

#[tokio::test]
async fn a_large_push_reaches_a_second_laptop_byte_exact_with_the_same_bills() {
    assert!(
        EVENTS >= i64::try_from(team::push::COPY_FROM).unwrap(),
        "the test must take the COPY path"
    );
    let pg = TestPostgres::start();
    let (alice, bob) = (laptop().await, laptop().await);
    join(&alice, &pg.url(), "alice").await;
    join(&bob, &pg.url(), "bob").await;
    busy_laptop(&alice.store, INSTANCES).await;

    let pushed = team::sync(&alice.store, later())
        .await
        .expect("alice syncs");
    assert_eq!(pushed.pushed, EVENTS);
    assert_eq!(
        pg.psql("SELECT count(*) FROM ledger_events"),
        EVENTS.to_string()
    );
    let pulled = team::sync(&bob.store, later()).await.expect("bob syncs");
    assert_eq!(pulled.pulled, EVENTS);
    assert!(pulled.conflicts.is_empty(), "{:?}", pulled.conflicts);

    assert_eq!(instances(&bob.store).await, instances(&alice.store).await);
    assert_eq!(events(&bob.store).await, events(&alice.store).await);
    assert_eq!(bills(&bob.store).await, bills(&alice.store).await);
    hostile_text_arrived(&bob.store).await;
    // A second sync sends nothing again and takes nothing twice.
    assert_eq!(team::sync(&alice.store, later()).await.unwrap().pushed, 0);
    assert_eq!(team::sync(&bob.store, later()).await.unwrap().pulled, 0);
}

#[tokio::test]
async fn a_link_cut_mid_copy_leaves_nothing_on_the_server_and_the_next_push_sends_all_once() {
    let pg = TestPostgres::start();
    let proxy = TcpProxy::start(([127, 0, 0, 1], pg.port()).into());
    let (alice, bob) = (laptop().await, laptop().await);
    join(&alice, &pg.url_on(proxy.port()), "alice").await;
    join(&bob, &pg.url(), "bob").await;
    busy_laptop(&alice.store, INSTANCES).await;
    let before = events(&alice.store).await;

    // The COPY data is a few hundred kilobytes: the link dies part way through it.
    proxy.arm(Trip {
        client_bytes: 60_000,
        server_bytes: 0,
    });
    let cut = team::sync(&alice.store, later()).await;
    assert!(proxy.tripped(), "the proxy cut the push");
    assert!(cut.is_err(), "a cut sync fails: {cut:?}");
    assert_eq!(events(&alice.store).await, before, "nothing local changed");
    assert_eq!(
        pg.psql("SELECT count(*) FROM ledger_events"),
        "0",
        "a cut COPY commits nothing"
    );

    let again = team::sync(&alice.store, later()).await.expect("push again");
    assert_eq!(again.pushed, EVENTS);
    assert_eq!(
        pg.psql("SELECT count(DISTINCT uid) || ' ' || count(*) FROM ledger_events"),
        format!("{EVENTS} {EVENTS}"),
        "every event once on the server"
    );
    let pulled = team::sync(&bob.store, later()).await.expect("bob syncs");
    assert_eq!(pulled.pulled, EVENTS);
    assert_eq!(events(&bob.store).await, events(&alice.store).await);
    assert_eq!(bills(&bob.store).await, bills(&alice.store).await);
}

/// The server answered a `COPY` push but the answer never arrived (here: this laptop forgets it
/// pushed), while more events were recorded: the next push sends a chunk the server holds in
/// part. Its events already there are skipped, the new ones are added once, and a second laptop
/// ends with exactly the first one's events and bills.
#[tokio::test]
async fn a_copy_push_of_events_the_server_partly_holds_adds_only_the_new_ones() {
    let pg = TestPostgres::start();
    let (alice, bob) = (laptop().await, laptop().await);
    join(&alice, &pg.url(), "alice").await;
    join(&bob, &pg.url(), "bob").await;
    busy_laptop(&alice.store, INSTANCES).await;
    let first = team::sync(&alice.store, later()).await.expect("first push");
    assert_eq!(first.pushed, EVENTS);
    let seq_before: i64 = pg
        .psql("SELECT max(seq) FROM ledger_events")
        .parse()
        .unwrap();

    for i in 0..INSTANCES {
        let name = format!("a-{i}");
        if i < 8 {
            continue; // renamed to hostile text by `busy_laptop`
        }
        ledger::record(&alice.store, &name, PowerAction::Start, h(10))
            .await
            .expect("start again");
    }
    let new_events = INSTANCES - 8;
    sqlx::query("UPDATE ledger_events SET shared = 0; UPDATE team_link SET shared_through = 0")
        .execute(alice.store.pool())
        .await
        .expect("forget what was pushed");

    let again = team::sync(&alice.store, later()).await.expect("push again");
    assert_eq!(again.pushed, new_events, "only the new events are new");
    assert_eq!(
        pg.psql("SELECT count(DISTINCT uid) || ' ' || count(*) FROM ledger_events"),
        format!("{0} {0}", EVENTS + new_events),
        "every event once on the server"
    );
    assert_eq!(
        pg.psql(&format!(
            "SELECT count(*) FROM ledger_events WHERE seq > {seq_before}"
        )),
        new_events.to_string(),
        "the new events are numbered after the first push, for pullers to find"
    );
    let pulled = team::sync(&bob.store, later()).await.expect("bob syncs");
    assert_eq!(pulled.pulled, EVENTS + new_events);
    assert_eq!(events(&bob.store).await, events(&alice.store).await);
    assert_eq!(bills(&bob.store).await, bills(&alice.store).await);
}

/// Whether `ANALYZE` (by hand, not autovacuum's) ran on the server's ledger.
fn ledger_analyzed(pg: &TestPostgres) -> bool {
    pg.psql(
        "SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'ledger_events'",
    ) == "t"
}

#[tokio::test]
async fn a_bulk_push_refreshes_the_servers_ledger_statistics_and_a_small_one_does_not() {
    let pg = TestPostgres::start();
    let (alice, bob) = (laptop().await, laptop().await);
    join(&alice, &pg.url(), "alice").await;
    join(&bob, &pg.url(), "bob").await;
    busy_laptop(&alice.store, INSTANCES).await;
    team::sync(&alice.store, later())
        .await
        .expect("alice syncs");
    assert!(
        !ledger_analyzed(&pg),
        "{EVENTS} events are below {}",
        team::push::ANALYZE_FROM
    );

    team_common::bulk_ledger(&bob.store, team::push::ANALYZE_FROM / 100, 100, h(0)).await;
    let pushed = team::sync(&bob.store, later()).await.expect("bob syncs");
    assert_eq!(pushed.pushed, team::push::ANALYZE_FROM);
    assert!(ledger_analyzed(&pg), "a bulk push analyzes the ledger");
    // The next pull's pages are read along the sequence index, not sorted from a scan.
    let plan = pg.psql(
        "EXPLAIN SELECT * FROM ledger_events WHERE team_id = 1 AND seq > 100 ORDER BY seq LIMIT 2500",
    );
    assert!(plan.contains("Index Scan"), "{plan}");
    assert!(!plan.contains("Sort"), "{plan}");
}

async fn pulled_seq(store: &Store) -> i64 {
    let mut conn = store.pool().acquire().await.expect("connection");
    leasehold_core::store::team::link(&mut conn)
        .await
        .expect("link")
        .expect("linked")
        .pulled_seq
}

/// Push alone (no pull after it), as the sync's first step does.
async fn push_only(store: &Store) -> i64 {
    let (mut server, row) = team::open_linked(store).await.expect("open");
    let pushed = team::push::push(
        store,
        &mut server,
        row.team_id,
        &row.member,
        &row.laptop_uid,
    )
    .await
    .expect("push");
    server.close().await;
    pushed
}

#[tokio::test]
async fn a_push_moves_the_pull_cursor_past_its_own_events_only_when_nothing_else_is_missing() {
    let pg = TestPostgres::start();
    let (alice, bob) = (laptop().await, laptop().await);
    join(&alice, &pg.url(), "alice").await;
    join(&bob, &pg.url(), "bob").await;
    ledger::add_instance(&bob.store, &team_common::rental("bob-a100", None), h(0))
        .await
        .expect("add");
    for (action, at) in [(PowerAction::Start, h(1)), (PowerAction::Stop, h(2))] {
        ledger::record(&bob.store, "bob-a100", action, at)
            .await
            .expect("record");
    }
    team::sync(&bob.store, later()).await.expect("bob syncs");

    // Bob's three events (1..=3) are not here yet: the cursor stays, the pull brings them.
    team_common::bulk_ledger(&alice.store, 30, 100, h(1)).await;
    assert_eq!(push_only(&alice.store).await, 3_000);
    assert_eq!(pulled_seq(&alice.store).await, 0);
    let synced = team::sync(&alice.store, later())
        .await
        .expect("alice syncs");
    assert_eq!((synced.pushed, synced.pulled), (0, 3));
    assert_eq!(pulled_seq(&alice.store).await, 3_003);

    // Now everything before her next events is here: the cursor moves past them.
    for action in [PowerAction::Stop, PowerAction::Start] {
        ledger::record(&alice.store, "bulk-0", action, later())
            .await
            .expect("record");
    }
    assert_eq!(push_only(&alice.store).await, 2);
    assert_eq!(pulled_seq(&alice.store).await, 3_005);
    let synced = team::sync(&alice.store, later())
        .await
        .expect("alice syncs");
    assert_eq!((synced.pushed, synced.pulled), (0, 0));

    // Bob then takes every one of hers, once, with the same bills.
    let pulled = team::sync(&bob.store, later()).await.expect("bob syncs");
    assert_eq!(pulled.pulled, 3_002);
    assert_eq!(events(&bob.store).await, events(&alice.store).await);
    assert_eq!(bills(&bob.store).await, bills(&alice.store).await);
}
