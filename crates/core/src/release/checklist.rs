//! The checklist itself: pure, from what the scan saw, the jobs recorded as running and the
//! last backup, to one status per check. Tested with hand-made inputs.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::backup::AtRiskReport;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum CheckStatus {
    Ok,
    /// Worth a look; does not block.
    Warn,
    /// Releasing now would lose work: resolve it or override it with a reason.
    Blocked,
    /// Could not be looked at (no connection, no scan): never shown as passed.
    NotChecked,
    /// Nothing to check (no earlier backup to compare with).
    NotApplicable,
}

/// One line of the checklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ReleaseCheck {
    /// Stable: `gpu.processes_running`, `git.unpushed`, `git.uncommitted`, `git.stashes`,
    /// `backup.never`, `backup.stale`, `jobs.running`, `instance.wipe_deadline`.
    pub code: String,
    pub status: CheckStatus,
    /// English, for the CLI; the UI builds its text from `code`, `count` and `items`.
    pub detail: String,
    #[ts(type = "number | null")]
    pub count: Option<u64>,
    /// What it is about: repository paths, `PID name`, job ids.
    pub items: Vec<String>,
}

/// What the checklist is computed from.
#[derive(Debug, Clone, Default)]
pub struct ChecklistInput<'a> {
    pub scan: Option<&'a AtRiskReport>,
    /// Ids (and names) of the jobs recorded as running on the instance.
    pub running_jobs: Vec<String>,
    pub last_backup: Option<DateTime<Utc>>,
    /// When a stopped instance will be wiped by the provider.
    pub wipe_at: Option<DateTime<Utc>>,
    /// Why the instance could not be looked at (never connected, powered off, gone): what is
    /// on it is then unknown, which blocks until the user overrides it with a reason.
    pub unreached: Option<String>,
}

fn check(code: &str, status: CheckStatus, detail: String, items: Vec<String>) -> ReleaseCheck {
    ReleaseCheck {
        code: code.to_owned(),
        status,
        detail,
        count: Some(items.len() as u64),
        items,
    }
}

fn blocked_if(any: bool) -> CheckStatus {
    if any {
        CheckStatus::Blocked
    } else {
        CheckStatus::Ok
    }
}

/// The checklist from `input`.
pub fn checklist(input: &ChecklistInput<'_>) -> Vec<ReleaseCheck> {
    let mut checks = Vec::new();
    if let (None, Some(why)) = (input.scan, &input.unreached) {
        checks.push(check(
            "instance.unreached",
            CheckStatus::Blocked,
            format!("the instance could not be looked at ({why}): GPU processes, commits and files on it are unknown"),
            vec![why.clone()],
        ));
    }
    if let Some(scan) = input.scan {
        let processes: Vec<String> = scan
            .gpu_processes
            .iter()
            .map(|p| format!("{} {}", p.pid, p.name))
            .collect();
        checks.push(check(
            "gpu.processes_running",
            blocked_if(!processes.is_empty()),
            if processes.is_empty() {
                "no process uses the GPU".to_owned()
            } else {
                format!(
                    "{} process(es) still use the GPU (a job may be training): {}",
                    processes.len(),
                    processes.join(", ")
                )
            },
            processes,
        ));
        let unpushed: Vec<String> = scan
            .repos
            .iter()
            .filter(|r| r.unpushed_commits > 0)
            .map(|r| r.path.clone())
            .collect();
        let commits: u64 = scan
            .repos
            .iter()
            .map(|r| u64::from(r.unpushed_commits))
            .sum();
        let mut unpushed_check = check(
            "git.unpushed",
            blocked_if(!unpushed.is_empty()),
            if unpushed.is_empty() {
                "every commit is on a remote".to_owned()
            } else {
                format!(
                    "{commits} commit(s) exist only on the instance, in {}",
                    unpushed.join(", ")
                )
            },
            unpushed,
        );
        unpushed_check.count = Some(commits);
        checks.push(unpushed_check);
        let dirty: Vec<String> = scan
            .repos
            .iter()
            .filter(|r| r.uncommitted_files > 0)
            .map(|r| r.path.clone())
            .collect();
        let files: u64 = scan
            .repos
            .iter()
            .map(|r| u64::from(r.uncommitted_files))
            .sum();
        let mut dirty_check = check(
            "git.uncommitted",
            blocked_if(!dirty.is_empty()),
            if dirty.is_empty() {
                "no modified or untracked files in any repository".to_owned()
            } else {
                format!(
                    "{files} modified or untracked file(s) in {}",
                    dirty.join(", ")
                )
            },
            dirty,
        );
        dirty_check.count = Some(files);
        checks.push(dirty_check);
        let stashed: Vec<String> = scan
            .repos
            .iter()
            .filter(|r| r.stashes > 0)
            .map(|r| r.path.clone())
            .collect();
        if !stashed.is_empty() {
            checks.push(check(
                "git.stashes",
                CheckStatus::Warn,
                format!(
                    "stashed changes exist only on the instance, in {}",
                    stashed.join(", ")
                ),
                stashed,
            ));
        }
    }
    checks.push(match input.last_backup {
        None => check(
            "backup.never",
            CheckStatus::Blocked,
            "this instance was never backed up".to_owned(),
            Vec::new(),
        ),
        Some(at) => check(
            "backup.never",
            CheckStatus::Ok,
            format!("last backed up at {}", at.to_rfc3339()),
            Vec::new(),
        ),
    });
    let changed = input
        .scan
        .and_then(|s| s.changed_since_last_backup.as_ref());
    checks.push(match (input.last_backup, changed) {
        (Some(_), Some(changed)) if changed.files > 0 => {
            let mut stale = check(
                "backup.stale",
                CheckStatus::Blocked,
                format!(
                    "{} file(s) ({} bytes) changed since the last backup",
                    changed.files, changed.bytes
                ),
                Vec::new(),
            );
            stale.count = Some(changed.files);
            stale
        }
        (Some(_), Some(_)) => check(
            "backup.stale",
            CheckStatus::Ok,
            "nothing changed since the last backup".to_owned(),
            Vec::new(),
        ),
        (Some(_), None) => check(
            "backup.stale",
            CheckStatus::NotChecked,
            "the instance was not scanned, so changes since the last backup are unknown".to_owned(),
            Vec::new(),
        ),
        (None, _) => check(
            "backup.stale",
            CheckStatus::NotApplicable,
            "no earlier backup to compare with (see backup.never)".to_owned(),
            Vec::new(),
        ),
    });
    // With no look at the instance, "no job running" would be a guess: only the jobs this
    // computer knows are still running can be said for sure.
    let unseen = input.scan.is_none() && input.unreached.is_some();
    checks.push(check(
        "jobs.running",
        if input.running_jobs.is_empty() && unseen {
            CheckStatus::NotChecked
        } else {
            blocked_if(!input.running_jobs.is_empty())
        },
        if input.running_jobs.is_empty() && unseen {
            "not checked: the instance could not be reached".to_owned()
        } else if input.running_jobs.is_empty() {
            "no Leasehold job is running".to_owned()
        } else {
            format!(
                "Leasehold job(s) still running: {}",
                input.running_jobs.join(", ")
            )
        },
        input.running_jobs.clone(),
    ));
    if let Some(wipe_at) = input.wipe_at {
        checks.push(check(
            "instance.wipe_deadline",
            CheckStatus::Warn,
            format!(
                "the provider wipes this stopped instance at {}",
                wipe_at.to_rfc3339()
            ),
            vec![wipe_at.to_rfc3339()],
        ));
    }
    checks
}

/// The codes of checks that block.
pub fn blocking(checks: &[ReleaseCheck]) -> Vec<String> {
    checks
        .iter()
        .filter(|c| c.status == CheckStatus::Blocked)
        .map(|c| c.code.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backup::{ChangedFiles, DiskKind, GpuWork, RepoAtRisk};

    fn scan() -> AtRiskReport {
        AtRiskReport {
            home: None,
            roots: vec![],
            repos: vec![],
            weights: vec![],
            changed_since_last_backup: None,
            environments: vec![],
            gpu_processes: vec![],
            disks: vec![],
            notes: vec![],
            complete: true,
        }
    }

    fn status(checks: &[ReleaseCheck], code: &str) -> CheckStatus {
        checks
            .iter()
            .find(|c| c.code == code)
            .unwrap_or_else(|| panic!("{code} missing"))
            .status
    }

    #[test]
    fn a_clean_instance_backed_up_after_its_last_change_passes() {
        let mut scan = scan();
        scan.changed_since_last_backup = Some(ChangedFiles {
            files: 0,
            bytes: 0,
            newest: None,
        });
        let checks = checklist(&ChecklistInput {
            scan: Some(&scan),
            last_backup: Some(DateTime::from_timestamp(1_700_000_000, 0).expect("time")),
            ..ChecklistInput::default()
        });
        assert!(blocking(&checks).is_empty(), "{checks:#?}");
        for code in [
            "gpu.processes_running",
            "git.unpushed",
            "git.uncommitted",
            "backup.never",
            "backup.stale",
            "jobs.running",
        ] {
            assert_eq!(status(&checks, code), CheckStatus::Ok, "{code}");
        }
    }

    #[test]
    fn training_unpushed_dirty_and_never_backed_up_all_block() {
        let mut scan = scan();
        scan.gpu_processes.push(GpuWork {
            pid: 4242,
            name: "python".into(),
            used_memory_mib: Some(17990),
            cwd: None,
        });
        scan.repos.push(RepoAtRisk {
            path: "/root/proj".into(),
            branch: Some("main".into()),
            has_remote: true,
            unpushed_commits: 2,
            uncommitted_files: 3,
            untracked_files: 1,
            stashes: 1,
            disk: DiskKind::System,
        });
        let checks = checklist(&ChecklistInput {
            scan: Some(&scan),
            running_jobs: vec!["20260101-train".into()],
            ..ChecklistInput::default()
        });
        assert_eq!(
            blocking(&checks),
            vec![
                "gpu.processes_running",
                "git.unpushed",
                "git.uncommitted",
                "backup.never",
                "jobs.running"
            ]
        );
        assert_eq!(status(&checks, "git.stashes"), CheckStatus::Warn);
        let unpushed = checks
            .iter()
            .find(|c| c.code == "git.unpushed")
            .expect("present");
        assert_eq!(unpushed.count, Some(2), "the count is of commits");
    }

    #[test]
    fn files_changed_after_the_backup_make_it_stale() {
        let mut scan = scan();
        scan.changed_since_last_backup = Some(ChangedFiles {
            files: 12,
            bytes: 4096,
            newest: None,
        });
        let checks = checklist(&ChecklistInput {
            scan: Some(&scan),
            last_backup: Some(DateTime::from_timestamp(1_700_000_000, 0).expect("time")),
            ..ChecklistInput::default()
        });
        assert_eq!(blocking(&checks), vec!["backup.stale"]);
    }

    #[test]
    fn an_instance_never_reached_blocks_on_what_is_unknown_until_overridden() {
        let checks = checklist(&ChecklistInput {
            unreached: Some("never connected".into()),
            ..ChecklistInput::default()
        });
        assert_eq!(
            blocking(&checks),
            vec!["instance.unreached", "backup.never"]
        );
        assert!(checks[0].detail.contains("never connected"));
        // What could not be seen is never ticked: no job check passes, no stale check compares.
        let status_of = |code: &str| checks.iter().find(|c| c.code == code).map(|c| c.status);
        assert_eq!(status_of("jobs.running"), Some(CheckStatus::NotChecked));
        assert_eq!(status_of("backup.stale"), Some(CheckStatus::NotApplicable));
    }
}
