//! "Is this rented machine usable, and if not, why?" in one call: run the probe battery on a
//! target (connected with [`crate::ssh::ConnectRequest`]) and diagnose the facts. The CLI's `verify` and the app's Verify page both call
//! [`verify`], so they report the same facts and findings.

pub mod history;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::diagnose::{self, DiagnoseContext, Finding};
use crate::probe::{self, BatteryOptions, Facts, ProbeError, ProbeSink};
use crate::ssh::SshError;
use crate::store::StoreError;
use crate::target::Target;

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
            Self::UnknownInstance(_) | Self::UnknownRun(_) => true,
            Self::CorruptRun(..) => false,
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
