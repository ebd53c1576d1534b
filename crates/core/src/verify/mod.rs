//! "Is this rented machine usable, and if not, why?" in one call: run the probe battery on a
//! target (connected with [`crate::ssh::ConnectRequest`] or kept open by
//! [`crate::connect::LiveTargets`]), diagnose the facts, and keep the run with what changed since
//! the one before.
//!
//! The whole sequence — the GPUs the rental promised, the battery, the findings, the history —
//! is [`check_and_record`]; the app's Verify page adds the instance's live connection and a stop
//! button through [`run_on_instance`]. The CLI's `verify` and the app call these, so they cannot
//! drift apart.

pub mod history;
mod running;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::connect::{self, ConnectError, LiveTargets};
use crate::diagnose::{self, DiagnoseContext, Finding, Lang};
use crate::probe::{self, BatteryOptions, Facts, ProbeError, ProbeSink};
use crate::ssh::{ConnectOptions, SshError};
use crate::store::{Store, StoreError};
use crate::target::Target;
use history::RecordedRun;

pub use running::RunningChecks;

/// What `verify` found: the facts and the findings drawn from them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct VerifyReport {
    pub facts: Facts,
    pub findings: Vec<Finding>,
}

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Ssh(#[from] SshError),
    #[error(transparent)]
    Probe(#[from] ProbeError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error("the checks were stopped")]
    Cancelled,
    #[error("no instance named {0:?} is recorded; `leasehold instance add` records one")]
    UnknownInstance(String),
    #[error("no verify run with id {0}")]
    UnknownRun(i64),
    #[error("stored verify run {0} cannot be read: {1}")]
    CorruptRun(i64, String),
}

impl crate::Coded for VerifyError {
    fn code(&self) -> &'static str {
        match self {
            Self::Ssh(err) => err.code(),
            Self::Probe(err) => err.code(),
            Self::Store(err) => err.code(),
            Self::Connect(err) => err.code(),
            Self::Cancelled => "verify.cancelled",
            Self::UnknownInstance(_) => "verify.unknown_instance",
            Self::UnknownRun(_) => "verify.unknown_run",
            Self::CorruptRun(..) => "verify.corrupt_run",
        }
    }

    fn is_bad_input(&self) -> bool {
        match self {
            Self::Ssh(err) => err.is_bad_input(),
            Self::Probe(err) => err.is_bad_input(),
            Self::Store(err) => err.is_bad_input(),
            Self::Connect(err) => err.is_bad_input(),
            Self::UnknownInstance(_) | Self::UnknownRun(_) => true,
            Self::Cancelled | Self::CorruptRun(..) => false,
        }
    }
}

/// Run the battery on `target` and diagnose the result.
pub async fn verify(
    target: &dyn Target,
    options: &BatteryOptions,
    context: &DiagnoseContext,
    sink: &dyn ProbeSink,
    now: DateTime<Utc>,
) -> Result<VerifyReport, VerifyError> {
    let facts = probe::run_battery(target, options, sink, now).await?;
    let findings = diagnose::diagnose(&facts, context);
    Ok(VerifyReport { facts, findings })
}

/// What to check besides the machine itself.
#[derive(Debug, Clone)]
pub struct CheckRequest {
    pub options: BatteryOptions,
    /// The language of the findings.
    pub lang: Lang,
    /// GPUs the rental promised (fewer visible is a finding). `None`: the recorded rental's
    /// count when the run is kept under an instance, else unchecked.
    pub expected_gpus: Option<u32>,
}

/// A finished run: the report, and what became of keeping it.
#[derive(Debug)]
pub struct Checked {
    pub report: VerifyReport,
    /// The run as kept in the history; `None` when no store was given. A failure here costs the
    /// history, not the report: the CLI warns, the app reports the error.
    pub recorded: Option<Result<RecordedRun, VerifyError>>,
}

/// A run as the Verify page shows it: the report, and its place in the instance's history.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct VerifyOutcome {
    pub report: VerifyReport,
    pub run: RecordedRun,
}

/// The GPUs promised → battery → findings → history sequence on `target`. With a `store`, the
/// run is kept (under `instance` when named) with what changed since the run before.
pub async fn check_and_record(
    target: &dyn Target,
    store: Option<&Store>,
    instance: Option<&str>,
    request: &CheckRequest,
    sink: &dyn ProbeSink,
    now: DateTime<Utc>,
) -> Result<Checked, VerifyError> {
    // A recorded rental also says how many GPUs it promised and, from its provider preset,
    // whether it is a container or a VM; an explicit count wins over the record.
    let context = match (store, instance) {
        (Some(store), Some(name)) => {
            let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
            let mut recorded = connect::diagnose_context(&mut conn, name, request.lang).await?;
            if request.expected_gpus.is_some() {
                recorded.expected_gpu_count = request.expected_gpus;
            }
            recorded
        }
        _ => DiagnoseContext {
            lang: request.lang,
            expected_gpu_count: request.expected_gpus,
            machine: None,
        },
    };
    let report = verify(target, &request.options, &context, sink, now).await?;
    let recorded = match store {
        Some(store) => Some(history::record(store, instance, &report).await),
        None => None,
    };
    Ok(Checked { report, recorded })
}

/// The Verify page's run on `instance`: over its open connection (dialling its saved target when
/// there is none), stoppable with [`RunningChecks::cancel`] (then `verify.cancelled`), kept in
/// the history.
#[allow(clippy::too_many_arguments)] // each is a distinct input; a struct would only rename them
pub async fn run_on_instance(
    store: &Store,
    live: &LiveTargets,
    running: &RunningChecks,
    instance: &str,
    options: BatteryOptions,
    lang: Lang,
    sink: &dyn ProbeSink,
    now: DateTime<Utc>,
) -> Result<VerifyOutcome, VerifyError> {
    let target = {
        let mut conn = store.pool().acquire().await.map_err(StoreError::from)?;
        live.get_or_connect(&mut conn, instance, ConnectOptions::default())
            .await?
    };
    let request = CheckRequest {
        options,
        lang,
        expected_gpus: None,
    };
    let work = check_and_record(
        target.as_ref(),
        Some(store),
        Some(instance),
        &request,
        sink,
        now,
    );
    let checked = running
        .run(instance, work)
        .await
        .ok_or(VerifyError::Cancelled)??;
    let Some(recorded) = checked.recorded else {
        unreachable!("check_and_record keeps every run it is given a store for")
    };
    let run = recorded?;
    Ok(VerifyOutcome {
        report: checked.report,
        run,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::Lang;
    use crate::probe::{NoProgress, ProbeEvent};
    use crate::target::LocalTarget;

    fn assert_send<T: Send>(_: &T) {}

    /// Tauri runs commands on a multi-threaded runtime: the whole verify future must be `Send`,
    /// with a plain closure as the progress sink too.
    #[test]
    fn the_verify_future_can_move_between_threads() {
        let options = BatteryOptions::default();
        let context = DiagnoseContext::new(Lang::En);
        let closure = |_: ProbeEvent| {};
        let now = DateTime::UNIX_EPOCH;
        let with_closure = verify(&LocalTarget, &options, &context, &closure, now);
        assert_send(&with_closure);
        let plain = verify(&LocalTarget, &options, &context, &NoProgress, now);
        assert_send(&plain);
    }

    /// The Verify page's command awaits this one: it must be `Send` as well.
    #[test]
    fn the_instance_run_can_move_between_threads() {
        fn check(store: &Store, live: &LiveTargets, running: &RunningChecks) {
            let closure = |_: ProbeEvent| {};
            let run = run_on_instance(
                store,
                live,
                running,
                "gpu-a",
                BatteryOptions::default(),
                Lang::En,
                &closure,
                DateTime::UNIX_EPOCH,
            );
            assert_send(&run);
        }
        let _ = check;
    }
}
