//! Shared setup for the team tests: a laptop (its own SQLite database) and joining it to the
//! team "lab" on the test PostgreSQL server.

#![allow(dead_code)] // each test binary uses a different subset

use chrono::{DateTime, Utc};
use leasehold_core::billing::{BillingRules, NewInstance};
use leasehold_core::ssh::Secret;
use leasehold_core::store::ledger::{insert_event, EventRow};
use leasehold_core::store::Store;
use leasehold_core::team::{self, ConnectRequest};
use leasehold_testkit::postgres::PG_PASSWORD;

pub struct Laptop {
    _dir: tempfile::TempDir,
    pub store: Store,
}

/// A laptop with a fresh database, not yet in any team.
pub async fn laptop() -> Laptop {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&dir.path().join("ledger.sqlite3"))
        .await
        .expect("open the laptop's database");
    Laptop { _dir: dir, store }
}

/// Join the team "lab" at `url` as `member`.
pub async fn join(laptop: &Laptop, url: &str, member: &str, at: DateTime<Utc>) {
    // Later syncs read the password as libpq would (no keychain here).
    std::env::set_var("PGPASSWORD", PG_PASSWORD);
    let request = ConnectRequest {
        url: url.to_owned(),
        member: member.to_owned(),
        team: "lab".to_owned(),
        password: Some(Secret::new(PG_PASSWORD)),
    };
    team::connect(&laptop.store, request, at)
        .await
        .unwrap_or_else(|err| panic!("{member} joins the team: {err}"));
}

/// A fresh laptop that joined the team.
pub async fn joined_laptop(url: &str, member: &str, at: DateTime<Utc>) -> Laptop {
    let laptop = laptop().await;
    join(&laptop, url, member, at).await;
    laptop
}

/// An A100 on AutoDL at 10 CNY an hour, with `budget` if given.
pub fn rental(name: &str, budget: Option<&str>) -> NewInstance {
    NewInstance {
        name: name.to_owned(),
        provider: "autodl".to_owned(),
        region: None,
        gpu_model: "A100".to_owned(),
        currency: "CNY".to_owned(),
        notes: None,
        planned_hours: None,
        budget: budget.map(|b| b.parse().expect("budget")),
        rules: BillingRules::simple("10".parse().expect("price"), 1),
    }
}

/// A large ledger written straight into the tables in one transaction (the ledger API would take
/// minutes for 100 000 events): `instances` A100s `bulk-N`, created a minute apart from `start`,
/// each with `events_per_instance` events (created, then start/stop pairs a minute apart).
pub async fn bulk_ledger(
    store: &Store,
    instances: i64,
    events_per_instance: i64,
    start: DateTime<Utc>,
) {
    let mut tx = store.write().await.expect("write");
    for i in 0..instances {
        let created = start + chrono::Duration::minutes(i);
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO instances (name, provider, gpu_model, currency, created_at)
             VALUES (?, 'autodl', 'A100', 'CNY', ?) RETURNING id",
        )
        .bind(format!("bulk-{i}"))
        .bind(created)
        .fetch_one(&mut *tx)
        .await
        .expect("instance");
        let rules: i64 = sqlx::query_scalar(
            "INSERT INTO billing_rules (instance_id, effective_from, price_per_gpu_hour, gpu_count,
                 billing_starts, stopped_billing, data_disk_per_hour, snapshot_per_hour,
                 public_ip_per_hour, traffic_per_gb, granularity)
             VALUES (?, ?, '2.5', 1, 'running', 'none', '0', '0', '0', '0', 'second') RETURNING id",
        )
        .bind(id)
        .bind(created)
        .fetch_one(&mut *tx)
        .await
        .expect("rules");
        let event = |kind: &str, at: DateTime<Utc>, rules_id: Option<i64>| EventRow {
            id: 0,
            instance_id: id,
            kind: kind.to_owned(),
            at,
            rules_id,
            traffic_gb: None,
        };
        insert_event(&mut tx, id, &event("created", created, Some(rules)))
            .await
            .expect("created");
        for e in 1..events_per_instance {
            let kind = if e % 2 == 1 { "started" } else { "stopped" };
            let at = created + chrono::Duration::minutes(e);
            insert_event(&mut tx, id, &event(kind, at, None))
                .await
                .expect("event");
        }
    }
    tx.commit().await.expect("commit");
}
