//! From facts to findings: pure rules that say what is wrong with a rented machine, what it
//! means, and what to do, with the evidence each verdict rests on.
//!
//! Rules only read [`Facts`]; they never run commands, so every rule is tested with hand-made
//! facts. Codes (`driver.no_devices`, `torch.cpu_build`) are stable: the UI and scripts match
//! them. Text is written in zh-CN and en.

pub mod diff;
pub(crate) mod rules;
pub(crate) mod text;
pub mod xid;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::billing::MachineKind;
use crate::probe::Facts;

pub use text::Lang;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum Severity {
    /// The machine cannot do GPU work as it is.
    Error,
    /// It works, but something costs time or money.
    Warning,
    /// Worth knowing.
    Info,
}

/// One step of a fix; `command` is copyable shell text when the step has one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct FixStep {
    pub text: String,
    pub command: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Finding {
    /// Stable dotted code, e.g. `torch.arch_unsupported`.
    pub code: String,
    pub severity: Severity,
    pub title: String,
    /// What it means.
    pub detail: String,
    /// What to do, in order.
    pub fix: Vec<FixStep>,
    /// The facts the verdict rests on, as the machine printed them.
    pub evidence: Vec<String>,
    /// What the finding is about when a code can appear several times (`gpu0`, `/`, a model
    /// name). Language-independent, so runs in different languages still compare; kept out of
    /// the JSON contract and stored beside it.
    #[serde(skip)]
    #[ts(skip)]
    pub subject: Option<String>,
}

impl Finding {
    /// Identity across runs: the code plus the subject.
    pub fn key(&self) -> String {
        match &self.subject {
            Some(subject) => format!("{}@{subject}", self.code),
            None => self.code.clone(),
        }
    }
}

/// What the rules need besides the facts.
#[derive(Debug, Clone, Copy)]
pub struct DiagnoseContext {
    pub lang: Lang,
    /// GPUs the rental promised; fewer visible is `gpu.count_mismatch`.
    pub expected_gpu_count: Option<u32>,
    /// What the rental's provider preset says the machine is; weighed with what the probe saw.
    pub machine: Option<MachineKind>,
}

impl DiagnoseContext {
    pub fn new(lang: Lang) -> Self {
        Self {
            lang,
            expected_gpu_count: None,
            machine: None,
        }
    }

    /// Whether the machine is a container, from the provider preset first (it knows what it
    /// rents; a probe can be ambiguous, e.g. no marker file in a container), else from the probe.
    pub fn is_container(&self, facts: &Facts) -> bool {
        match self.machine {
            Some(MachineKind::Container) => true,
            Some(MachineKind::VirtualMachine) => false,
            None => facts.in_container(),
        }
    }
}

/// Every finding for these facts, errors first. Pure: same facts, same findings.
pub fn diagnose(facts: &Facts, context: &DiagnoseContext) -> Vec<Finding> {
    let mut findings = rules::all(facts, context);
    findings.sort_by_key(|f| f.severity);
    findings
}

#[cfg(test)]
mod tests;
