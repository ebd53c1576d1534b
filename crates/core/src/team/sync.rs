//! One sync (push, pull, conflicts, then the alerts' and Verify extras) and the app's background
//! loop of them: the order of the steps matters, and is easier to see on its own.

use chrono::{DateTime, Utc};
use serde::Serialize;
use ts_rs::TS;

use super::connect::{current_link, open_linked};
use super::{alerts, conflicts, pull, push, records, verify, Conflict, Server, TeamError};
use crate::store::team::{self as repo, LinkRow};
use crate::store::{Store, StoreError};

/// What one sync did: `{"pushed", "pulled", "conflicts"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct SyncReport {
    pub pushed: i64,
    pub pulled: i64,
    pub conflicts: Vec<Conflict>,
}

/// The longest a whole sync may take: a server that stops answering (a half-open connection, a
/// stalled proxy) ends it with [`TeamError::TimedOut`] instead of holding the background sync.
/// Every page is committed with its cursor, so a sync cut here loses nothing.
pub const SYNC_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// Push what this laptop recorded, pull what the others did, and list the conflicts.
#[tracing::instrument(skip_all, err)]
pub async fn sync(store: &Store, now: DateTime<Utc>) -> Result<SyncReport, TeamError> {
    sync_within(store, now, SYNC_TIMEOUT).await
}

/// [`sync`], given up after `limit`.
pub async fn sync_within(
    store: &Store,
    now: DateTime<Utc>,
    limit: std::time::Duration,
) -> Result<SyncReport, TeamError> {
    tokio::time::timeout(limit, sync_unbounded(store, now))
        .await
        .unwrap_or(Err(TeamError::TimedOut {
            seconds: limit.as_secs(),
        }))
}

async fn sync_unbounded(store: &Store, now: DateTime<Utc>) -> Result<SyncReport, TeamError> {
    let (mut server, row) = open_linked(store).await?;
    let mut report = sync_with(store, &mut server, &row, now).await;
    if report.is_ok() {
        // The left-running alerts' settings and idle reports travel after the ledger.
        if let Err(err) = exchange_extras(store, &mut server, &row, now).await {
            report = Err(err);
        }
    }
    server.close().await;
    report
}

/// [`sync`] over an open connection (the app keeps one; the benchmark counts its round trips).
pub async fn sync_with(
    store: &Store,
    server: &mut Server,
    row: &LinkRow,
    now: DateTime<Utc>,
) -> Result<SyncReport, TeamError> {
    // The conflict report replays the instances whose ledger changed; that work runs beside the
    // push (the server is busy inserting) and beside the pull's pages, not after them.
    let mut warmup = conflicts::Warmup::default();
    warmup.nudge(store);
    let pushed = push::push(store, server, row.team_id, &row.member, &row.laptop_uid).await?;
    // After the events: every instance a record names is on the server by then.
    records::push(store, server, row.team_id, &row.member, &row.laptop_uid).await?;
    let pulled = pull::pull(
        store,
        server,
        pull::Pulling {
            team_id: row.team_id,
            member: &row.member,
            laptop: &row.laptop_uid,
            now,
        },
        &mut warmup,
    )
    .await?;
    let warmed = warmup.finish().await;
    // After the events, so every instance a resolution names is on the server.
    let mut found = conflicts::conflicts_using(store, warmed).await?;
    if conflicts::exchange(store, server, row.team_id, &found, now).await? > 0 {
        found = conflicts::conflicts(store).await?;
    }
    let mut tx = store.write().await?;
    repo::set_last_sync(&mut tx, now).await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(SyncReport {
        pushed,
        pulled: pulled.events,
        conflicts: found,
    })
}

/// What travels besides the ledger and its records, after them: the left-running alerts'
/// settings and idle reports, and the shared Verify summaries.
pub(super) async fn exchange_extras(
    store: &Store,
    server: &mut Server,
    row: &LinkRow,
    now: DateTime<Utc>,
) -> Result<(), TeamError> {
    alerts::exchange(store, server, row, now).await?;
    verify::exchange(store, server, row, now).await
}

/// How often the app syncs in the background while linked.
pub const BACKGROUND_SYNC_EVERY: std::time::Duration = std::time::Duration::from_secs(120);

/// The app's background push/pull: every `every`, sync when this database is linked to a team.
/// A failure (offline, a password changed elsewhere) is logged and retried next time; the
/// Settings → Team page shows the last sync time and the conflicts.
pub async fn keep_in_sync(
    store: Store,
    clock: std::sync::Arc<dyn crate::Clock>,
    every: std::time::Duration,
) {
    loop {
        tokio::time::sleep(every).await;
        if !matches!(current_link(&store).await, Ok(Some(_))) {
            continue;
        }
        match sync(&store, clock.now()).await {
            // The sync's last page brings the team budgets the reminders read.
            Ok(report) => tracing::info!(
                pushed = report.pushed,
                pulled = report.pulled,
                conflicts = report.conflicts.len(),
                "team sync"
            ),
            Err(err) => tracing::warn!(%err, "team sync failed; retrying later"),
        }
    }
}
