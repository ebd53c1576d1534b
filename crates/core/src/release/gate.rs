//! The release itself: the typed confirmation, the checklist's verdict with the user's
//! overrides, then the ledger's `released` event and the reasons, in that order, so a refused
//! release writes nothing at all.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use super::bill::{final_bill, FinalBill};
use super::{
    blocking, instance_id, latest_check_run_here, record_check, CheckOutcome, ReleaseError,
};
use crate::billing::{ledger, PowerAction};
use crate::store::backups::{self as repo, ReleaseOverrideRow};
use crate::store::{Store, StoreError};

/// The code a release without any check is recorded under.
pub const NO_CHECK: &str = "release.no_check";

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct ReleaseRequest {
    pub name: String,
    /// The name as the user typed it.
    pub confirm: String,
    /// `(code, reason)` for each blocked check the user releases despite.
    pub overrides: Vec<(String, String)>,
    /// Release although no check was ever run, for this reason.
    pub no_check: Option<String>,
    /// A check just run (not yet recorded) to go by instead of the latest recorded one.
    pub fresh: Option<CheckOutcome>,
}

/// `CODE=REASON` from the command line.
pub fn parse_override(text: &str) -> Result<(String, String), ReleaseError> {
    let (code, reason) = text
        .split_once('=')
        .ok_or_else(|| ReleaseError::BadOverride(text.to_owned()))?;
    let code = code.trim();
    if code.is_empty() {
        return Err(ReleaseError::BadOverride(text.to_owned()));
    }
    if reason.trim().is_empty() {
        return Err(ReleaseError::EmptyReason {
            code: code.to_owned(),
        });
    }
    Ok((code.to_owned(), reason.trim().to_owned()))
}

/// Release instance `request.name` at `at` when nothing blocks it; `busy_hours` are the GPU-busy
/// hours the caller measured (`None`: the monitor's history, if it watched the instance).
pub async fn release(
    store: &Store,
    request: ReleaseRequest,
    at: DateTime<Utc>,
    busy_hours: Option<Decimal>,
) -> Result<FinalBill, ReleaseError> {
    let instance_id = instance_id(store, &request.name).await?;
    if request.confirm.trim() != request.name {
        return Err(ReleaseError::ConfirmationMismatch {
            name: request.name.clone(),
            typed: request.confirm.clone(),
        });
    }
    for (code, reason) in &request.overrides {
        if reason.trim().is_empty() {
            return Err(ReleaseError::EmptyReason { code: code.clone() });
        }
    }
    let check = match request.fresh.clone() {
        Some(fresh) => Some(fresh),
        None => latest_check_run_here(store, &request.name).await?,
    };
    let mut reasons: Vec<(Option<i64>, String, String)> = Vec::new();
    match &check {
        Some(check) => {
            let unresolved: Vec<String> = blocking(&check.checks)
                .into_iter()
                .filter(|code| !request.overrides.iter().any(|(c, _)| c == code))
                .collect();
            if !unresolved.is_empty() {
                return Err(ReleaseError::Blocked { codes: unresolved });
            }
            for code in blocking(&check.checks) {
                if let Some((_, reason)) = request.overrides.iter().find(|(c, _)| *c == code) {
                    reasons.push((check.id, code, reason.clone()));
                }
            }
        }
        None => match request.no_check.as_deref().map(str::trim) {
            Some(reason) if !reason.is_empty() => {
                reasons.push((None, NO_CHECK.to_owned(), reason.to_owned()));
            }
            Some(_) => {
                return Err(ReleaseError::EmptyReason {
                    code: NO_CHECK.to_owned(),
                })
            }
            None => return Err(ReleaseError::NeverChecked(request.name.clone())),
        },
    }
    // The ledger first: when it refuses (already released, a time before the last event)
    // nothing else is written.
    ledger::record(store, &request.name, PowerAction::Release, at).await?;
    let fresh_id = match request.fresh {
        Some(fresh) => record_check(store, &request.name, fresh).await?.id,
        None => None,
    };
    let mut tx = store.write().await?;
    for (check_id, code, reason) in reasons {
        repo::insert_override(
            &mut tx,
            &ReleaseOverrideRow {
                id: 0,
                instance_id,
                check_id: check_id.or(fresh_id),
                code,
                reason,
                at,
            },
        )
        .await?;
    }
    tx.commit().await.map_err(StoreError::from)?;
    final_bill(store, &request.name, at, busy_hours).await
}
