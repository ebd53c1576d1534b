//! What changed since the last run: findings that appeared or went away (matched by code and
//! subject, so a run in another language compares), and facts whose value moved (driver upgraded, a GPU gone, torch reinstalled). Readings that change by the second
//! (temperature, power, utilisation, timings) are left out so the diff shows real changes.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use super::{Finding, Severity};
use crate::probe::Facts;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct FindingChange {
    pub code: String,
    pub severity: Severity,
    pub title: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct FactChange {
    /// Dotted path into the facts, e.g. `gpu.nvidia_smi.driver_version`.
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, Default)]
#[ts(export)]
pub struct RunDiff {
    pub new_findings: Vec<FindingChange>,
    pub resolved_findings: Vec<FindingChange>,
    pub changed_facts: Vec<FactChange>,
}

impl RunDiff {
    pub fn is_empty(&self) -> bool {
        self.new_findings.is_empty()
            && self.resolved_findings.is_empty()
            && self.changed_facts.is_empty()
    }
}

/// Last path segments that are live readings, not state.
const VOLATILE: &[&str] = &[
    "collected_at",
    "duration_ms",
    "seconds",
    "temperature_c",
    "power_draw_w",
    "utilization_pct",
    "memory_used_mib",
    "memory_available_mib",
    "clock_sm_mhz",
    "clock_mem_mhz",
    "pstate",
    "used_mib",
    "available_mib",
    "used_memory_mib",
    "tflops",
    "http_status",
    "error",
    "message",
];
/// Subtrees that are bookkeeping or per-run noise.
const VOLATILE_PREFIXES: &[&str] = &[
    "probes",
    "kernel_log.xid_events",
    "gpu.process_states",
    "gpu.nvidia_smi.processes",
    "stress",
];

fn key(finding: &Finding) -> String {
    finding.key()
}

fn change(finding: &Finding) -> FindingChange {
    FindingChange {
        code: finding.code.clone(),
        severity: finding.severity,
        title: finding.title.clone(),
    }
}

/// Compare two runs of the same machine. Pure.
pub fn diff_runs(before: (&Facts, &[Finding]), after: (&Facts, &[Finding])) -> RunDiff {
    let (before_facts, before_findings) = before;
    let (after_facts, after_findings) = after;
    let new_findings = after_findings
        .iter()
        .filter(|f| !before_findings.iter().any(|b| key(b) == key(f)))
        .map(change)
        .collect();
    let resolved_findings = before_findings
        .iter()
        .filter(|b| !after_findings.iter().any(|f| key(b) == key(f)))
        .map(change)
        .collect();
    let mut old = Vec::new();
    let mut new = Vec::new();
    flatten(
        "",
        &serde_json::to_value(before_facts).unwrap_or(Value::Null),
        &mut old,
    );
    flatten(
        "",
        &serde_json::to_value(after_facts).unwrap_or(Value::Null),
        &mut new,
    );
    let mut changed_facts = Vec::new();
    for (path, value) in &new {
        match old.iter().find(|(p, _)| p == path) {
            Some((_, previous)) if previous == value => {}
            Some((_, previous)) => changed_facts.push(FactChange {
                path: path.clone(),
                before: previous.clone(),
                after: value.clone(),
            }),
            None => changed_facts.push(FactChange {
                path: path.clone(),
                before: None,
                after: value.clone(),
            }),
        }
    }
    for (path, value) in &old {
        if !new.iter().any(|(p, _)| p == path) {
            changed_facts.push(FactChange {
                path: path.clone(),
                before: value.clone(),
                after: None,
            });
        }
    }
    RunDiff {
        new_findings,
        resolved_findings,
        changed_facts,
    }
}

fn volatile(path: &str) -> bool {
    let last = path.rsplit('.').next().unwrap_or(path);
    VOLATILE.contains(&last)
        || VOLATILE_PREFIXES
            .iter()
            .any(|prefix| path == *prefix || path.starts_with(&format!("{prefix}.")))
}

/// Scalars at dotted paths (`gpu.nvidia_smi.gpus.0.name`); nulls kept as `None`.
fn flatten(path: &str, value: &Value, out: &mut Vec<(String, Option<String>)>) {
    if !path.is_empty() && volatile(path) {
        return;
    }
    let join = |segment: &str| {
        if path.is_empty() {
            segment.to_owned()
        } else {
            format!("{path}.{segment}")
        }
    };
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                flatten(&join(k), v, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                flatten(&join(&i.to_string()), v, out);
            }
        }
        Value::Null => out.push((path.to_owned(), None)),
        Value::String(s) => out.push((path.to_owned(), Some(s.clone()))),
        other => out.push((path.to_owned(), Some(other.to_string()))),
    }
}
