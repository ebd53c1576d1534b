//! The final bill: what the rental cost in all, over how many hours, what one hour of real GPU
//! work cost, the backups that were saved and the reasons given for releasing despite a check.
//!
//! GPU-busy hours come from monitoring: given by the caller, or else read from the monitor's minute
//! history of the instance; the bill says "not measured" when neither has any.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{instance_id, unknown, ReleaseError};
use crate::backup::record::history;
use crate::backup::BackupRecord;
use crate::billing::{ledger, CostReport};
use crate::store::backups as repo;
use crate::store::Store;
use crate::store::StoreError;

/// A reason the user gave for releasing despite a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct OverrideView {
    pub code: String,
    pub reason: String,
    pub at: DateTime<Utc>,
}

/// The bill shown after the release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct FinalBill {
    /// The whole bill: breakdown, intervals, total.
    pub report: CostReport,
    /// Hours billed in any state, from the first billed moment to the release.
    #[ts(type = "string")]
    pub total_hours: Decimal,
    /// Hours powered on with GPUs.
    #[ts(type = "string")]
    pub running_hours: Decimal,
    /// Hours the GPUs were busy, as monitoring saw them; `null` when not measured.
    #[ts(type = "string | null")]
    pub busy_hours: Option<Decimal>,
    /// `total / busy_hours`; `null` without busy hours.
    #[ts(type = "string | null")]
    pub cost_per_busy_hour: Option<Decimal>,
    /// `total / running_hours`; `null` when it never ran.
    #[ts(type = "string | null")]
    pub cost_per_running_hour: Option<Decimal>,
    pub backups: Vec<BackupRecord>,
    pub overrides: Vec<OverrideView>,
}

fn hours(seconds: i64) -> Decimal {
    (Decimal::from(seconds) / Decimal::from(3600)).round_dp(2)
}

fn per_hour(total: Decimal, hours: Decimal) -> Option<Decimal> {
    (hours > Decimal::ZERO).then(|| (total / hours).round_dp(2))
}

/// GPU-busy hours the monitor recorded for instance `name` up to `now`; `None` when it never
/// watched it (or its history cannot be read: a bill is still worth showing without them).
pub async fn observed_busy_hours(store: &Store, name: &str, now: DateTime<Utc>) -> Option<Decimal> {
    match crate::monitor::history::busy_hours(store, name, now).await {
        Ok(hours) if hours.observed_hours > Decimal::ZERO => Some(hours.busy_hours),
        Ok(_) => None,
        Err(err) => {
            tracing::warn!(%err, "the GPU history could not be read for the bill");
            None
        }
    }
}

/// The final bill of instance `name` as of `now` (normally its release time). `busy_hours`:
/// what the caller measured, or `None` for what the monitor's history says.
pub async fn final_bill(
    store: &Store,
    name: &str,
    now: DateTime<Utc>,
    busy_hours: Option<Decimal>,
) -> Result<FinalBill, ReleaseError> {
    let busy_hours = match busy_hours {
        Some(hours) => Some(hours),
        None => observed_busy_hours(store, name, now).await,
    };
    let report = ledger::cost(store, name, now)
        .await
        .map_err(unknown(name))?;
    let summary = ledger::list(store, now)
        .await?
        .into_iter()
        .find(|s| s.name == name)
        .ok_or_else(|| ReleaseError::UnknownInstance(name.to_owned()))?;
    let billed_seconds: i64 = report
        .intervals
        .iter()
        .filter(|i| i.billed)
        .map(|i| (i.end - i.start).num_seconds().max(0))
        .sum();
    let running_hours = hours(summary.running_seconds);
    let id = instance_id(store, name).await?;
    let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
    let overrides = repo::overrides(&mut conn, id)
        .await?
        .into_iter()
        .map(|row| OverrideView {
            code: row.code,
            reason: row.reason,
            at: row.at,
        })
        .collect();
    drop(conn);
    Ok(FinalBill {
        total_hours: hours(billed_seconds),
        running_hours,
        busy_hours: busy_hours.map(|h| h.round_dp(2)),
        cost_per_busy_hour: busy_hours.and_then(|h| per_hour(report.total, h)),
        cost_per_running_hour: per_hour(report.total, running_hours),
        backups: history(store, name).await?,
        overrides,
        report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn cost_per_hour_needs_hours() {
        assert_eq!(per_hour(dec!(25.00), dec!(10)), Some(dec!(2.50)));
        assert_eq!(
            per_hour(dec!(25.00), Decimal::ZERO),
            None,
            "no division by zero hours"
        );
        assert_eq!(hours(5400), dec!(1.5));
    }
}
