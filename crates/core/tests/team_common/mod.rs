//! Shared setup for the team tests: a laptop (its own SQLite database) and joining it to the
//! team "lab" on the test PostgreSQL server.

#![allow(dead_code)] // each test binary uses a different subset

use chrono::{DateTime, Utc};
use leasehold_core::ssh::Secret;
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
