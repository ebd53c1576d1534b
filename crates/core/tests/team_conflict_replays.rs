//! The conflict report's kept replays (`store::conflict_replays`): an instance whose ledger did
//! not change is not replayed again, and any change to what its report depends on (an event, a
//! resolution, its name) replays it.

mod team_common;

use chrono::{DateTime, Duration, TimeZone, Utc};
use leasehold_core::billing::{ledger, PowerAction};
use leasehold_core::store::ledger::{insert_event, EventRow};
use leasehold_core::store::Store;
use leasehold_core::team::conflicts;

fn h(hours: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 8, 0, 0).unwrap() + Duration::hours(hours)
}

async fn rented(store: &Store, name: &str) {
    let rental = team_common::rental(name, None);
    ledger::add_instance(store, &rental, h(0))
        .await
        .expect("add");
}

/// An event written as a merge writes it: no rule checks it on the way in.
async fn merged_event(store: &Store, name: &str, kind: &str, at: DateTime<Utc>) {
    let traffic_gb = (kind == "traffic_recorded").then(|| "1.5".to_owned());
    let mut tx = store.write().await.expect("write");
    let instance_id: i64 = sqlx::query_scalar("SELECT id FROM instances WHERE name = ?")
        .bind(name)
        .fetch_one(&mut *tx)
        .await
        .expect("instance");
    let row = EventRow {
        id: 0,
        instance_id,
        kind: kind.to_owned(),
        at,
        rules_id: None,
        traffic_gb,
    };
    insert_event(&mut tx, instance_id, &row)
        .await
        .expect("insert event");
    tx.commit().await.expect("commit");
}

/// Overwrite the kept report of `name` (fingerprint untouched): what a report shows after this
/// tells whether it replayed the instance or reused the kept report.
async fn tamper_kept_report(store: &Store, name: &str) {
    let changed = sqlx::query(
        "UPDATE conflict_replays SET refused = '[]'
         WHERE instance_id = (SELECT id FROM instances WHERE name = ?)",
    )
    .bind(name)
    .execute(store.pool())
    .await
    .expect("tamper")
    .rows_affected();
    assert_eq!(changed, 1, "a report is kept for {name}");
}

async fn refused_of(store: &Store) -> Vec<(String, String)> {
    conflicts::conflicts(store)
        .await
        .expect("conflicts")
        .into_iter()
        .map(|c| (c.instance, c.event_kind.unwrap_or_default()))
        .collect()
}

#[tokio::test]
async fn an_unchanged_instance_is_not_replayed_and_any_change_to_its_ledger_replays_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&dir.path().join("ledger.sqlite3"))
        .await
        .expect("open");
    for name in ["a100", "h100"] {
        rented(&store, name).await;
        ledger::record(&store, name, PowerAction::Release, h(2))
            .await
            .expect("release");
        // A second release, as a merge of two laptops' ledgers brings it.
        merged_event(&store, name, "released", h(3)).await;
    }
    let both = vec![
        ("a100".to_owned(), "released".to_owned()),
        ("h100".to_owned(), "released".to_owned()),
    ];
    assert_eq!(refused_of(&store).await, both, "each refused release shown");

    // Nothing changed: the kept reports are what the next report shows.
    tamper_kept_report(&store, "a100").await;
    assert_eq!(
        refused_of(&store).await,
        vec![("h100".to_owned(), "released".to_owned())],
        "an unchanged instance is not replayed"
    );

    // An event arrives for a100: replayed (and h100, unchanged, still reused).
    merged_event(&store, "a100", "traffic_recorded", h(1)).await;
    tamper_kept_report(&store, "h100").await;
    let after_event = refused_of(&store).await;
    assert!(
        after_event.contains(&("a100".to_owned(), "released".to_owned())),
        "a new event replays its instance: {after_event:?}"
    );
    assert!(
        !after_event.iter().any(|(name, _)| name == "h100"),
        "the other instance is still the kept report: {after_event:?}"
    );

    // A resolution arrives: every instance is replayed.
    let (kept_uid, withdrawn_uid): (String, String) = sqlx::query_as(
        "SELECT min(e.uid), max(e.uid) FROM ledger_events e JOIN instances i ON i.id = e.instance_id
         WHERE i.name = 'a100' AND e.kind = 'released'",
    )
    .fetch_one(store.pool())
    .await
    .expect("releases");
    sqlx::query(
        "INSERT INTO ledger_withdrawals (uid, instance_uid, event_uid, kept_uid, recorded_by, at)
         SELECT '7d0c4a4e-7a53-4a8e-9a55-2c6f1f0f4e11', uid, ?, ?, 'me', '2026-03-02T00:00:00Z'
         FROM instances WHERE name = 'a100'",
    )
    .bind(&withdrawn_uid)
    .bind(&kept_uid)
    .execute(store.pool())
    .await
    .expect("withdraw");
    assert_eq!(
        refused_of(&store).await,
        vec![("h100".to_owned(), "released".to_owned())],
        "a100 settled by the resolution, h100 replayed again"
    );

    // A renamed instance is replayed: its conflicts carry the new name.
    sqlx::query("UPDATE instances SET name = 'h100-main' WHERE name = 'h100'")
        .execute(store.pool())
        .await
        .expect("rename");
    assert_eq!(
        refused_of(&store).await,
        vec![("h100-main".to_owned(), "released".to_owned())]
    );
}

#[tokio::test]
async fn a_warm_up_over_some_instances_fingerprints_them_as_the_whole_report_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&dir.path().join("ledger.sqlite3"))
        .await
        .expect("open");
    for name in ["a100", "h100", "4090"] {
        rented(&store, name).await;
        ledger::record(&store, name, PowerAction::Release, h(2))
            .await
            .expect("release");
        merged_event(&store, name, "released", h(3)).await;
    }
    let uid_of = |name: &'static str| {
        let store = store.clone();
        async move {
            sqlx::query_scalar::<_, String>("SELECT uid FROM instances WHERE name = ?")
                .bind(name)
                .fetch_one(store.pool())
                .await
                .expect("uid")
        }
    };
    let (a100, h100) = (uid_of("a100").await, uid_of("h100").await);

    // The warm-up looks at the two instances named (and an unknown uid, which it skips)...
    let mut warmup = conflicts::Warmup::default();
    warmup.nudge_instances(
        &store,
        [
            a100,
            h100,
            "7d0c4a4e-7a53-4a8e-9a55-2c6f1f0f4e11".to_owned(),
        ],
    );
    let mut warmed = warmup.finish().await;
    assert_eq!(warmed.len(), 2, "the two named instances replayed");

    // ...and the report takes its results as current: a report altered in memory is what it
    // shows, so the fingerprints matched; the third instance is replayed by the report itself.
    for (_, report) in warmed.values_mut() {
        report.clear();
    }
    let shown: Vec<String> = conflicts::conflicts_using(&store, warmed)
        .await
        .expect("conflicts")
        .into_iter()
        .map(|c| c.instance)
        .collect();
    assert_eq!(shown, vec!["4090".to_owned()]);
    // What the report kept is the warm-up's: the next report, from the kept rows, agrees.
    assert_eq!(
        refused_of(&store).await,
        vec![("4090".to_owned(), "released".to_owned())]
    );
}
