//! "Optionally the last Verify result": a member who opts in (off by default, a setting of this
//! laptop's) shares a summary of the last Verify of each instance run here — when, how many errors
//! and warnings, which findings (language-independent keys, never the facts or any output of the
//! machine beyond them). Every sync sends it (`verify_summaries`, PostgreSQL migration 0190) and
//! brings back everyone's, cached in the working copy for the Team page offline.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::server::verify::SummaryRow;
use super::{Server, TeamError};
use crate::store::team::alerts as repo;
use crate::store::team::LinkRow;
use crate::store::{Store, StoreError};

const SHARE_KEY: &str = "team.share_verify";
const CACHE_KEY: &str = "team.verify_summaries";
/// A summary names at most this many findings (a hostile machine could report thousands).
const MAX_FINDINGS: usize = 64;

/// The last Verify of one instance, as a member shared it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct VerifySummary {
    pub instance_uid: String,
    pub collected_at: DateTime<Utc>,
    pub errors: u32,
    pub warnings: u32,
    /// Each finding's key (`code@subject`).
    pub finding_keys: Vec<String>,
    pub shared_by: String,
}

/// Whether this laptop shares its last Verify results (off unless the member turned it on).
pub async fn sharing(store: &Store) -> Result<bool, TeamError> {
    let mut conn = store.read().await?;
    Ok(repo::setting(&mut conn, SHARE_KEY)
        .await?
        .is_some_and(|v| v == "true"))
}

/// Turn sharing on or off (from the next sync).
pub async fn set_sharing(store: &Store, share: bool, now: DateTime<Utc>) -> Result<(), TeamError> {
    let mut tx = store.write().await?;
    repo::put_setting(
        &mut tx,
        SHARE_KEY,
        if share { "true" } else { "false" },
        now,
    )
    .await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(())
}

/// Everyone's shared summaries as the last sync brought them.
pub async fn shared(store: &Store) -> Result<Vec<VerifySummary>, TeamError> {
    let mut conn = store.read().await?;
    Ok(repo::setting(&mut conn, CACHE_KEY)
        .await?
        .and_then(|json| serde_json::from_str(&json).ok())
        .unwrap_or_default())
}

/// One run's summary as `member` shares it: counts never negative, at most [`MAX_FINDINGS`]
/// finding keys (none when they cannot be read). Pure.
pub fn summary_of(
    (instance_uid, collected_at, errors, warnings, keys): (String, DateTime<Utc>, i64, i64, String),
    member: &str,
) -> VerifySummary {
    VerifySummary {
        instance_uid,
        collected_at,
        errors: u32::try_from(errors).unwrap_or(0),
        warnings: u32::try_from(warnings).unwrap_or(0),
        finding_keys: serde_json::from_str::<Vec<String>>(&keys)
            .unwrap_or_default()
            .into_iter()
            .take(MAX_FINDINGS)
            .collect(),
        shared_by: member.to_owned(),
    }
}

/// Send this laptop's summaries (when it shares them) and cache everyone's.
pub async fn exchange(
    store: &Store,
    server: &mut Server,
    row: &LinkRow,
    now: DateTime<Utc>,
) -> Result<(), TeamError> {
    if sharing(store).await? {
        let mine = {
            let mut conn = store.read().await?;
            let runs = repo::last_verify_runs(&mut conn).await?;
            runs.into_iter()
                .map(|run| summary_of(run, &row.member))
                .collect::<Vec<_>>()
        };
        if !mine.is_empty() {
            let count = |n: u32| i32::try_from(n).unwrap_or(i32::MAX);
            let rows: Vec<SummaryRow> = mine
                .iter()
                .map(|s| {
                    (
                        s.instance_uid.clone(),
                        s.collected_at,
                        count(s.errors),
                        count(s.warnings),
                        serde_json::to_string(&s.finding_keys).unwrap_or_default(),
                    )
                })
                .collect();
            server
                .send_verify_summaries(row.team_id, &row.member, &rows)
                .await?;
        }
    }
    let rows = server.verify_summaries(row.team_id).await?;
    let all: Vec<VerifySummary> = rows
        .into_iter()
        .map(|(uid, at, errors, warnings, keys, by)| {
            summary_of((uid, at, i64::from(errors), i64::from(warnings), keys), &by)
        })
        .collect();
    let json = serde_json::to_string(&all).unwrap_or_else(|_| "[]".into());
    let mut tx = store.write().await?;
    repo::put_setting(&mut tx, CACHE_KEY, &json, now).await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{Clock, FixedClock};
    use chrono::TimeZone;

    #[test]
    fn a_summary_keeps_counts_and_a_bounded_list_of_finding_keys() {
        let now = FixedClock::new(Utc.with_ymd_and_hms(2026, 3, 2, 9, 0, 0).unwrap()).now();
        let keys: Vec<String> = (0..100).map(|i| format!("gpu.ecc@{i}")).collect();
        let summary = summary_of(
            (
                "uid".into(),
                now,
                2,
                -1,
                serde_json::to_string(&keys).unwrap(),
            ),
            "bob",
        );
        assert_eq!((summary.errors, summary.warnings), (2, 0));
        assert_eq!(summary.finding_keys.len(), MAX_FINDINGS);
        assert_eq!(summary.shared_by, "bob");
        let unreadable = summary_of(("uid".into(), now, 0, 0, "not json".into()), "bob");
        assert!(unreadable.finding_keys.is_empty());
    }
}
