//! What a merge could not settle by itself, for the user to see: events the billing rules refuse
//! in the merged log (a second release, a start of a running instance), shared instances kept
//! under another name because the name was taken here, and rows this version cannot read.
//! Nothing is dropped: refused events stay in the ledger (left out of the bill the same way on
//! every laptop) and stay listed.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::SqliteConnection;
use ts_rs::TS;

use super::TeamError;
use crate::billing::{events::settle, rows};
use crate::store::ledger as ledger_repo;
use crate::store::team as repo;
use crate::store::{Store, StoreError};
use crate::Coded;

/// One conflict, as `team sync --json` and the Settings → Team list show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
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
}

/// Refused events of one instance.
async fn refused_in(
    conn: &mut SqliteConnection,
    instance: &ledger_repo::InstanceRow,
    uid: &str,
) -> Result<Vec<Conflict>, TeamError> {
    let rules = ledger_repo::rules_for(&mut *conn, instance.id).await?;
    let event_rows = ledger_repo::events_for(&mut *conn, instance.id).await?;
    let origins = repo::event_origins(&mut *conn, instance.id).await?;
    let events = rows::events_from_rows(&rules, &event_rows)?;
    let settled = settle(events)?;
    Ok(settled
        .refused
        .into_iter()
        .map(|(index, err)| {
            let row = &event_rows[index];
            let origin = origins.get(index);
            Conflict {
                kind: "refused_event".into(),
                instance: instance.name.clone(),
                instance_uid: uid.to_owned(),
                member: origin
                    .and_then(|o| o.recorded_by.clone())
                    .unwrap_or_default(),
                event_uid: origin.map(|o| o.uid.clone()),
                event_kind: Some(row.kind.clone()),
                at: Some(row.at),
                code: Some(err.code().to_owned()),
                message: format!(
                    "{} of {:?} at {} does not fit the merged ledger and is left out of the bill: {err}",
                    row.kind, instance.name, row.at
                ),
            }
        })
        .collect())
}

/// Every conflict in the working copy now.
pub async fn conflicts(store: &Store) -> Result<Vec<Conflict>, TeamError> {
    let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
    let mut found = Vec::new();
    let recorders = repo::instance_recorders(&mut conn).await?;
    for instance in ledger_repo::list_instances(&mut conn).await? {
        let uid = recorders
            .iter()
            .find(|(id, _, _)| *id == instance.id)
            .map(|(_, uid, _)| uid.clone())
            .unwrap_or_default();
        found.extend(refused_in(&mut conn, &instance, &uid).await?);
    }
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
            message: row.detail,
        });
    }
    Ok(found)
}
