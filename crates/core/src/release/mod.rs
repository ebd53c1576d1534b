//! Release: the checklist that stands between the user and a release that loses work, the
//! overrides (each with a recorded reason), the ledger's `released` event, and the final bill.
//!
//! `check` runs the at-risk scan live on the instance (GPU processes come from the same script's
//! `nvidia-smi --query-compute-apps`), adds the jobs still running (their recorded state read
//! afresh from the instance) and the last backup, and records the result on the instance.
//! `release` goes by the latest recorded check (or a fresh one) and refuses — writing nothing — while a blocked check is neither resolved nor
//! overridden, when no check exists and none was waived, or when the typed confirmation is not
//! the instance's name.

mod bill;
mod checklist;
mod error;
mod gate;
mod status;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

pub use bill::{final_bill, FinalBill};
pub use checklist::{blocking, checklist, CheckStatus, ChecklistInput, ReleaseCheck};
pub use error::ReleaseError;
pub use gate::{parse_override, release, ReleaseRequest};
pub use status::{backup_status, BackupStatus};

use crate::backup::{self, AtRiskReport, InstanceContext, ScanOptions};
use crate::billing::{ledger, BillingError, InstanceState};
use crate::clock::FixedClock;
use crate::job::record::refresh_running;
use crate::job::JobState;
use crate::store::backups::{self as repo, ReleaseCheckRow};
use crate::store::ledger::find_instance;
use crate::store::{Store, StoreError};
use crate::target::Target;

/// A checklist as run at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct CheckOutcome {
    /// The recorded check's id (`null` while not recorded).
    pub id: Option<i64>,
    pub at: DateTime<Utc>,
    pub blocked: bool,
    pub checks: Vec<ReleaseCheck>,
    /// What the scan saw, so the wizard can offer the fixes (`null` for a check read back).
    pub scan: Option<AtRiskReport>,
    /// The provider's console page that releases instances, when known.
    pub console_url: Option<String>,
}

pub(crate) async fn instance_id(store: &Store, name: &str) -> Result<i64, ReleaseError> {
    let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
    find_instance(&mut conn, name)
        .await?
        .map(|row| row.id)
        .ok_or_else(|| ReleaseError::UnknownInstance(name.to_owned()))
}

fn unknown(name: &str) -> impl Fn(BillingError) -> ReleaseError + '_ {
    move |err| match err {
        BillingError::UnknownInstance { .. } => ReleaseError::UnknownInstance(name.to_owned()),
        other => other.into(),
    }
}

/// Run the checklist live on `target` without recording it.
pub async fn evaluate(
    store: &Store,
    target: &dyn Target,
    name: &str,
    options: &ScanOptions,
    now: DateTime<Utc>,
) -> Result<CheckOutcome, ReleaseError> {
    let wipe_at = wipe_at(store, name, now).await?;
    let context = InstanceContext::load(store, name, now).await?;
    let scan = backup::scan(target, options, Some(&context)).await?;
    // A job recorded as running may have ended (or been lost) since the app last looked: read
    // its state from the instance first, so a stale record does not block the release.
    let jobs = refresh_running(store, target, name, &FixedClock::new(now)).await?;
    Ok(outcome(
        Some(scan),
        running_labels(jobs),
        context,
        wipe_at,
        None,
        now,
    ))
}

/// The release check of an instance Leasehold cannot reach (`why`: never connected, powered
/// off, gone): the ledger's checks (backups, recorded jobs, the wipe date) and a blocked
/// `instance.unreached` for everything only a look could tell. Recorded like [`check`], so the
/// user can override what is blocked with reasons and release.
pub async fn check_unreached(
    store: &Store,
    name: &str,
    why: &str,
    now: DateTime<Utc>,
) -> Result<CheckOutcome, ReleaseError> {
    let wipe_at = wipe_at(store, name, now).await?;
    let context = InstanceContext::load(store, name, now).await?;
    let jobs = crate::job::record::list_for_instance(store, name).await?;
    let unreached = Some(why.to_owned());
    let outcome = outcome(None, running_labels(jobs), context, wipe_at, unreached, now);
    record_check(store, name, outcome).await
}

/// When the provider wipes `name`, if the ledger has it stopped.
async fn wipe_at(
    store: &Store,
    name: &str,
    now: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>, ReleaseError> {
    let summary = ledger::cost(store, name, now)
        .await
        .map_err(unknown(name))?;
    Ok((summary.state == Some(InstanceState::Stopped))
        .then_some(summary.wipe_at)
        .flatten())
}

/// The jobs still running, as the checklist names them: the id, and the label when there is one.
fn running_labels(jobs: Vec<crate::job::record::JobRecord>) -> Vec<String> {
    jobs.into_iter()
        .filter(|job| job.state == JobState::Running)
        .map(|job| match job.name {
            Some(label) => format!("{} ({label})", job.id),
            None => job.id,
        })
        .collect()
}

/// The checklist and its outcome, from a look (`scan`) or from why there was none.
fn outcome(
    scan: Option<AtRiskReport>,
    running_jobs: Vec<String>,
    context: InstanceContext,
    wipe_at: Option<DateTime<Utc>>,
    unreached: Option<String>,
    now: DateTime<Utc>,
) -> CheckOutcome {
    let checks = checklist(&ChecklistInput {
        scan: scan.as_ref(),
        running_jobs,
        last_backup: context.last_backup,
        wipe_at,
        unreached,
    });
    CheckOutcome {
        id: None,
        at: now,
        blocked: !blocking(&checks).is_empty(),
        checks,
        scan,
        console_url: context.storage.console_url,
    }
}

/// Record a check's result on instance `name`; returns it with its id.
pub async fn record_check(
    store: &Store,
    name: &str,
    mut outcome: CheckOutcome,
) -> Result<CheckOutcome, ReleaseError> {
    let instance_id = instance_id(store, name).await?;
    let checks = serde_json::to_string(&outcome.checks)
        .map_err(|err| ReleaseError::Corrupt(err.to_string()))?;
    let mut tx = store.write().await?;
    let id = repo::insert_check(
        &mut tx,
        &ReleaseCheckRow {
            id: 0,
            instance_id,
            at: outcome.at,
            blocked: outcome.blocked,
            checks,
        },
    )
    .await?;
    tx.commit().await.map_err(StoreError::from)?;
    outcome.id = Some(id);
    Ok(outcome)
}

/// `release-check`: run the checklist live and record it on the instance.
pub async fn check(
    store: &Store,
    target: &dyn Target,
    name: &str,
    options: &ScanOptions,
    now: DateTime<Utc>,
) -> Result<CheckOutcome, ReleaseError> {
    let outcome = evaluate(store, target, name, options, now).await?;
    record_check(store, name, outcome).await
}

/// The latest recorded check of instance `name` (a teammate's, pulled, included).
pub async fn latest_check(store: &Store, name: &str) -> Result<Option<CheckOutcome>, ReleaseError> {
    latest_check_of(store, name, false).await
}

/// The latest check of instance `name` run on this laptop: what the release gate reads, so a
/// teammate's check (or one dated ahead) never stands in for the one run here.
pub async fn latest_check_run_here(
    store: &Store,
    name: &str,
) -> Result<Option<CheckOutcome>, ReleaseError> {
    latest_check_of(store, name, true).await
}

async fn latest_check_of(
    store: &Store,
    name: &str,
    run_here: bool,
) -> Result<Option<CheckOutcome>, ReleaseError> {
    let instance_id = instance_id(store, name).await?;
    let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
    let row = if run_here {
        repo::latest_check_run_here(&mut conn, instance_id).await?
    } else {
        repo::latest_check(&mut conn, instance_id).await?
    };
    let Some(row) = row else {
        return Ok(None);
    };
    let checks: Vec<ReleaseCheck> =
        serde_json::from_str(&row.checks).map_err(|err| ReleaseError::Corrupt(err.to_string()))?;
    Ok(Some(CheckOutcome {
        id: Some(row.id),
        at: row.at,
        blocked: row.blocked,
        checks,
        scan: None,
        console_url: None,
    }))
}
