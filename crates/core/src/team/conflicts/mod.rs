//! What a merge could not settle by itself, for the user to see: events the billing rules refuse
//! in the merged log (a second release, a start of a running instance), shared instances kept
//! under another name because the name was taken here, and rows this version cannot read.
//! Nothing is dropped: refused events stay in the ledger (left out of the bill the same way on
//! every laptop) and stay listed, with the event that stands in the bill in their place, until a
//! member chooses which of the two to keep ([`resolve`]). Events are immutable, so the choice is a
//! new record (`store::team::withdrawals`): the other event is left out of every replay from then on.
//! [`exchange`] shares these records with the team at each sync, so every laptop settles the same
//! way and computes the same bill.
//!
//! This file holds the conflicts as they are shown and dismissed; [`replay`] finds the refused
//! events (the slow part, kept and warmed up ahead of a sync's report), [`resolutions`] the
//! choices members make and how they travel.

mod replay;
mod resolutions;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use replay::refused_using;
pub use replay::{Replays, Warmup};
pub use resolutions::{exchange, resolve};

use super::TeamError;
use crate::store::team as repo;
use crate::store::{Store, StoreError};

/// One conflict, as `team sync --json` and the Settings → Team list show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Conflict {
    /// `refused_event`, `name_collision` or `unreadable`.
    pub kind: String,
    /// The instance's name on this laptop.
    pub instance: String,
    pub instance_uid: String,
    /// Who recorded the event (or the instance, for a name collision).
    pub member: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub event_uid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub event_kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub at: Option<DateTime<Utc>>,
    /// The billing rule's error code for a refused event (`billing.after_release`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub code: Option<String>,
    /// What happened, in English (the UI words it from `kind` and `code`).
    pub message: String,
    /// For a notice a pull stored (`name_collision`, `unreadable`): what [`dismiss`] takes once
    /// the user has read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub key: Option<String>,
    /// For a refused event: the accepted event of the same kind it collides with (the one in the
    /// bill now). Resolving keeps one of the two.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub standing: Option<StandingEvent>,
}

/// The event that stands in the bill where a refused one would not fit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct StandingEvent {
    pub event_uid: String,
    pub member: String,
    pub event_kind: String,
    pub at: DateTime<Utc>,
}

/// Every conflict in the working copy now: refused events, then the ones pulls stored.
pub async fn conflicts(store: &Store) -> Result<Vec<Conflict>, TeamError> {
    conflicts_using(store, Replays::new()).await
}

/// [`conflicts`], reusing what a [`Warmup`] replayed.
pub async fn conflicts_using(store: &Store, known: Replays) -> Result<Vec<Conflict>, TeamError> {
    let mut found = refused_using(store, known).await?;
    let mut conn = store.read().await?;
    for row in repo::stored_conflicts(&mut conn).await? {
        found.push(Conflict {
            kind: row.kind,
            instance: row.instance_name,
            instance_uid: row.instance_uid,
            member: row.member,
            event_uid: None,
            event_kind: None,
            at: Some(row.found_at),
            code: None,
            key: Some(row.key),
            message: row.detail,
            standing: None,
        });
    }
    Ok(found)
}

/// Dismiss a notice a pull stored (a shared name kept under another name here, a row this version
/// cannot read) once the user has read it: kept with the time, no longer listed. Only this
/// laptop's list changes (these notices are about this laptop's copy). Returns the conflicts left.
#[tracing::instrument(skip(store), err)]
pub async fn dismiss(
    store: &Store,
    key: &str,
    now: DateTime<Utc>,
) -> Result<Vec<Conflict>, TeamError> {
    let mut tx = store.write().await?;
    let dismissed = repo::dismiss_conflict(&mut tx, key, now).await?;
    tx.commit().await.map_err(StoreError::from)?;
    if !dismissed {
        return Err(TeamError::ConflictGone);
    }
    conflicts(store).await
}
