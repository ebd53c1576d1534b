//! Keeping verify runs: each run's facts and findings go into the store, attached to a recorded
//! instance when the user names one, and every run can be compared with the one before it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{VerifyError, VerifyReport};
use crate::diagnose::diff::{diff_runs, RunDiff};
use crate::diagnose::{Finding, Severity};
use crate::probe::Facts;
use crate::store::probe_runs::{self, NewProbeRunRow, ProbeRunRow, RunOwner};
use crate::store::{ledger, Store};

/// A stored run as the history list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RunSummary {
    #[ts(type = "number")]
    pub id: i64,
    pub target: String,
    pub collected_at: DateTime<Utc>,
    pub errors: u32,
    pub warnings: u32,
    /// Codes of the run's findings, errors first.
    pub codes: Vec<String>,
}

/// What `record` stored, and how it differs from the previous run of the same machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RecordedRun {
    #[ts(type = "number")]
    pub id: i64,
    /// `None` for the first run of this machine.
    pub changes: Option<RunDiff>,
}

async fn instance_id(store: &Store, name: &str) -> Result<i64, VerifyError> {
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::Query)?;
    ledger::find_instance(&mut conn, name)
        .await?
        .map(|row| row.id)
        .ok_or_else(|| VerifyError::UnknownInstance(name.to_owned()))
}

/// Fail early (before probing) when `instance` names no recorded instance.
pub async fn check_instance(store: &Store, instance: &str) -> Result<(), VerifyError> {
    instance_id(store, instance).await.map(|_| ())
}

fn count(findings: &[Finding], severity: Severity) -> i64 {
    i64::try_from(findings.iter().filter(|f| f.severity == severity).count()).unwrap_or(i64::MAX)
}

fn decode(row: &ProbeRunRow) -> Result<VerifyReport, VerifyError> {
    let facts: Facts = serde_json::from_str(&row.facts)
        .map_err(|e| VerifyError::CorruptRun(row.id, e.to_string()))?;
    let findings: Vec<Finding> = serde_json::from_str(&row.findings)
        .map_err(|e| VerifyError::CorruptRun(row.id, e.to_string()))?;
    Ok(VerifyReport { facts, findings })
}

/// Store a run (under `instance` when given) and compare it with the previous one.
pub async fn record(
    store: &Store,
    instance: Option<&str>,
    report: &VerifyReport,
) -> Result<RecordedRun, VerifyError> {
    let instance_id = match instance {
        Some(name) => Some(instance_id(store, name).await?),
        None => None,
    };
    let facts = serde_json::to_string(&report.facts)
        .map_err(|e| VerifyError::CorruptRun(0, e.to_string()))?;
    let findings = serde_json::to_string(&report.findings)
        .map_err(|e| VerifyError::CorruptRun(0, e.to_string()))?;
    let keys: Vec<String> = report.findings.iter().map(Finding::key).collect();
    let finding_keys =
        serde_json::to_string(&keys).map_err(|e| VerifyError::CorruptRun(0, e.to_string()))?;
    let mut tx = store.write().await?;
    let id = probe_runs::insert_probe_run(
        &mut tx,
        &NewProbeRunRow {
            instance_id,
            target: &report.facts.target,
            collected_at: report.facts.collected_at,
            facts: &facts,
            findings: &findings,
            finding_keys: &finding_keys,
            errors: count(&report.findings, Severity::Error),
            warnings: count(&report.findings, Severity::Warning),
        },
    )
    .await?;
    tx.commit().await.map_err(crate::store::StoreError::Query)?;
    Ok(RecordedRun {
        id,
        changes: changes(store, id).await?,
    })
}

/// What changed between run `id` and the run before it; `None` when it is the first.
pub async fn changes(store: &Store, id: i64) -> Result<Option<RunDiff>, VerifyError> {
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::Query)?;
    let run = probe_runs::get_probe_run(&mut conn, id)
        .await?
        .ok_or(VerifyError::UnknownRun(id))?;
    let Some(previous) = probe_runs::previous_probe_run(&mut conn, &run).await? else {
        return Ok(None);
    };
    let (after, before) = (decode(&run)?, decode(&previous)?);
    Ok(Some(diff_runs(
        (&before.facts, &before.findings),
        (&after.facts, &after.findings),
    )))
}

/// Runs of an instance (by name) or, without one, of a target, newest first.
pub async fn history(
    store: &Store,
    instance: Option<&str>,
    target: &str,
    limit: u32,
) -> Result<Vec<RunSummary>, VerifyError> {
    let id = match instance {
        Some(name) => Some(instance_id(store, name).await?),
        None => None,
    };
    let owner = id.map_or(RunOwner::Target(target), RunOwner::Instance);
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::Query)?;
    let rows = probe_runs::list_probe_runs(&mut conn, owner, i64::from(limit)).await?;
    rows.iter()
        .map(|row| {
            let report = decode(row)?;
            Ok(RunSummary {
                id: row.id,
                target: row.target.clone(),
                collected_at: row.collected_at,
                errors: u32::try_from(row.errors).unwrap_or(0),
                warnings: u32::try_from(row.warnings).unwrap_or(0),
                codes: report.findings.iter().map(|f| f.code.clone()).collect(),
            })
        })
        .collect()
}

/// One stored run, decoded.
pub async fn load(store: &Store, id: i64) -> Result<VerifyReport, VerifyError> {
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::Query)?;
    let row = probe_runs::get_probe_run(&mut conn, id)
        .await?
        .ok_or(VerifyError::UnknownRun(id))?;
    decode(&row)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::diagnose::{diagnose, DiagnoseContext, Lang};
    use crate::probe::nvidia_smi;

    fn report_at(hour: u32, nvidia_smi_text: &str) -> VerifyReport {
        let at = Utc
            .with_ymd_and_hms(2026, 11, 29, hour, 0, 0)
            .single()
            .expect("valid time");
        let mut facts = Facts::empty("root@gpu.example:22", at);
        facts.gpu = Some(crate::probe::gpu::GpuFacts {
            nvidia_smi: nvidia_smi::parse(nvidia_smi_text),
            nvidia_smi_path: None,
            nvidia_smi_found_at: Vec::new(),
            kernel_modules: Vec::new(),
            kernel_module_version: None,
            device_nodes: Vec::new(),
            process_states: Vec::new(),
        });
        let findings = diagnose(&facts, &DiagnoseContext::new(Lang::En));
        VerifyReport { facts, findings }
    }

    const HEALTHY: &str = "| NVIDIA-SMI 550.127.05             Driver Version: 550.127.05     CUDA Version: 12.4     |\n|   0  NVIDIA GeForce RTX 4090        On  |   00000000:01:00.0 Off |                  Off |\n|  0%   28C    P8             20W /  450W |       2MiB /  24564MiB |      0%      Default |";

    #[tokio::test]
    async fn runs_are_kept_per_target_with_what_changed_since_the_last() {
        let store = Store::open_in_memory().await.expect("store");
        let first = record(&store, None, &report_at(10, HEALTHY))
            .await
            .expect("first run stored");
        assert_eq!(first.changes, None, "nothing to compare the first run with");
        let broken = report_at(11, "No devices were found");
        let second = record(&store, None, &broken)
            .await
            .expect("second run stored");
        let changes = second.changes.expect("compared with the first run");
        assert_eq!(
            changes
                .new_findings
                .iter()
                .map(|f| f.code.as_str())
                .collect::<Vec<_>>(),
            vec!["driver.no_devices"]
        );
        assert!(changes
            .changed_facts
            .iter()
            .any(|c| c.path == "gpu.nvidia_smi.status"
                && c.before.as_deref() == Some("ok")
                && c.after.as_deref() == Some("no_devices")));

        let listed = history(&store, None, "root@gpu.example:22", 10)
            .await
            .expect("history");
        assert_eq!(
            listed.iter().map(|r| r.id).collect::<Vec<_>>(),
            vec![second.id, first.id],
            "newest first"
        );
        assert_eq!(
            (listed[0].errors, listed[0].codes.clone()),
            (1, vec!["driver.no_devices".to_owned()])
        );
        assert_eq!(
            load(&store, first.id).await.expect("loads"),
            report_at(10, HEALTHY)
        );
        assert!(history(&store, None, "someone-else:22", 10)
            .await
            .expect("history")
            .is_empty());
    }

    #[tokio::test]
    async fn an_unknown_instance_is_refused_as_bad_input() {
        let store = Store::open_in_memory().await.expect("store");
        let err = record(&store, Some("nope"), &report_at(10, HEALTHY))
            .await
            .expect_err("no such instance");
        assert!(matches!(err, VerifyError::UnknownInstance(_)));
        assert!(crate::Coded::is_bad_input(&err));
    }
}
