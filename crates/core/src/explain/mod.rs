//! "What does this error mean, on this machine, and what do I do?" — pure rules over an error
//! text (a traceback, a log tail, `dmesg` lines), optionally with the instance's latest Verify
//! facts and its planned task.
//!
//! Renters meet the same dozen errors in their first week (CUDA out of memory, no kernel image for
//! a new GPU, a driver too old for the wheel, NCCL in a container, a full system disk, Hugging Face
//! unreachable) and search forums for each. This module answers with findings in the same shape
//! and with the same codes as Verify (`crate::diagnose`): a code means the same thing everywhere.
//! A CUDA OOM is parsed into numbers and a cause, and with a planned task the estimator says what
//! each remedy would need and which card would fit. Text it does not recognise gets
//! `explain.unknown` with where to look next, never a guess.
//!
//! The app's "Paste an error" box, the CLI's `leasehold explain` and a failed job's log all call
//! [`explain`]; [`load_context`] gathers what the store knows about an instance.
//!
//! A CUDA OOM is read in both PyTorch formats, in MiB. One Aho–Corasick pass runs over bounded
//! lines, so a 50 MB log takes well under a second. Used by the paste box on the instance and
//! Verify pages.

mod context;
mod oom;
pub mod remedy;
mod rules;
mod scan;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::catalog::EstimateRequest;
use crate::diagnose::{Finding, Lang};
use crate::probe::Facts;
use crate::store::StoreError;
use crate::Coded;

pub use context::{explain_on, load_context, load_plan, save_plan};
pub use oom::{
    BiggerCard, Disagreement, OomCause, OomFormat, OomReport, PlanFigures, RemedyFigure,
};
pub use remedy::{RemedyChange, RemedyPlan};

/// What the rules may use besides the text.
#[derive(Debug, Clone, Default)]
pub struct ExplainContext {
    pub lang: Lang,
    /// The instance's latest Verify facts (driver, GPU, disks, torch), when known.
    pub facts: Option<Facts>,
    /// What the user plans to run there (the estimator's inputs), when known.
    pub plan: Option<EstimateRequest>,
    /// The GPU the rental is for ("RTX 4090"), used when the facts do not name one.
    pub gpu_model: Option<String>,
    /// What this user paid per GPU-hour before ([`crate::catalog::earlier_prices`]), to price
    /// the bigger card Explain names last.
    pub prices: Vec<crate::catalog::recommend::PriceEntry>,
    /// The market's kept offers, to price the bigger card at what renting it costs today.
    pub offers: Vec<crate::market::Offer>,
}

impl ExplainContext {
    pub fn new(lang: Lang) -> Self {
        Self {
            lang,
            ..Self::default()
        }
    }
}

/// The answer: findings (errors first) and, for a CUDA OOM, its numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Explanation {
    pub findings: Vec<Finding>,
    pub oom: Option<OomReport>,
    /// For an OOM whose job is too big, with a planned task: the estimator's figures.
    pub plan: Option<PlanFigures>,
}

/// Explain `text`. Pure: the same text and context give the same answer. Never fails; an
/// unrecognised text is `explain.unknown`.
pub fn explain(text: &str, context: &ExplainContext) -> Explanation {
    let scan = scan::scan(text);
    let (oom, plan, mut findings) = oom::explain_oom(&scan, context);
    findings.extend(rules::all(&scan, context));
    if findings.is_empty() {
        findings.push(rules::unknown(&scan, context));
    }
    findings.sort_by_key(|f| f.severity);
    Explanation {
        findings,
        oom,
        plan,
    }
}

/// Check the input before explaining it: an empty paste is the caller's mistake.
pub fn check_input(text: &str) -> Result<(), ExplainError> {
    if text.trim().is_empty() {
        return Err(ExplainError::Empty);
    }
    Ok(())
}

#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    #[error("there is no error text to explain; paste a traceback or a log")]
    Empty,
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("no instance named {0:?} is recorded; `leasehold instance add` records one")]
    UnknownInstance(String),
    #[error("the planned task is not usable: {0}")]
    BadPlan(String),
    #[error("stored data for the instance cannot be read: {0}")]
    Corrupt(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Coded for ExplainError {
    fn code(&self) -> &'static str {
        match self {
            Self::Empty => "explain.empty",
            Self::Read { .. } => "explain.unreadable",
            Self::UnknownInstance(_) => "explain.unknown_instance",
            Self::BadPlan(_) => "explain.bad_plan",
            Self::Corrupt(_) => "explain.corrupt",
            Self::Store(err) => err.code(),
        }
    }

    fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Self::Empty | Self::Read { .. } | Self::UnknownInstance(_) | Self::BadPlan(_)
        )
    }
}
