//! What the at-risk scan found, as the UI and `backup scan --json` see it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Which disk an item lives on, as far as the provider's rules are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum DiskKind {
    /// The system disk (home and everything else not named below).
    System,
    /// The provider's data disk (AutoDL's `/root/autodl-tmp`).
    DataDisk,
    /// The provider's file storage that outlives the instance (AutoDL's `/root/autodl-fs`).
    FileStorage,
}

/// A git repository and what in it exists only on the instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RepoAtRisk {
    pub path: String,
    /// The branch checked out (a short commit id when detached); `null` before the first commit.
    pub branch: Option<String>,
    pub has_remote: bool,
    /// Commits not on any remote (all of them when there is no remote).
    pub unpushed_commits: u32,
    /// Lines of `git status --porcelain`: modified and untracked files.
    pub uncommitted_files: u32,
    pub untracked_files: u32,
    pub stashes: u32,
    pub disk: DiskKind,
}

impl RepoAtRisk {
    /// Something here would be lost with the instance.
    pub fn at_risk(&self) -> bool {
        self.unpushed_commits > 0 || self.uncommitted_files > 0 || self.stashes > 0
    }
}

/// A model weight file or a checkpoint folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct WeightItem {
    pub path: String,
    #[ts(type = "number")]
    pub bytes: u64,
    /// A checkpoint folder (`checkpoint-500`) rather than one file.
    pub folder: bool,
    pub modified: Option<DateTime<Utc>>,
    pub disk: DiskKind,
}

/// Files modified since the last backup of this instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ChangedFiles {
    #[ts(type = "number")]
    pub files: u64,
    #[ts(type = "number")]
    pub bytes: u64,
    pub newest: Option<DateTime<Utc>>,
}

/// A Python environment whose package list can be exported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Environment {
    /// `conda` (one conda environment), `pip` (the default interpreter's packages) or `recipes`
    /// (Leasehold install recipes that ran on the instance).
    pub kind: String,
    pub name: String,
    pub path: Option<String>,
    pub packages: Option<u32>,
}

/// A process holding GPU memory, and the folder it works in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct GpuWork {
    pub pid: u32,
    pub name: String,
    pub used_memory_mib: Option<u32>,
    pub cwd: Option<String>,
}

/// One filesystem the scanned roots live on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct DiskUse {
    pub mount: String,
    pub filesystem: String,
    #[ts(type = "number")]
    pub size_bytes: u64,
    #[ts(type = "number")]
    pub used_bytes: u64,
    #[ts(type = "number")]
    pub available_bytes: u64,
    pub kind: DiskKind,
}

/// Something the user should know next to the list: what the provider keeps, what the scan
/// left out. `code` is stable (the UI's text key); `detail` is English for the CLI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ScanNote {
    pub code: String,
    pub path: Option<String>,
    pub days: Option<u32>,
    #[ts(type = "number | null")]
    pub count: Option<u64>,
    /// The user owning what was left alone (a repository of another user is not scanned).
    #[serde(default)]
    pub owner: Option<String>,
    pub detail: String,
}

/// Everything `backup scan` reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct AtRiskReport {
    pub home: Option<String>,
    /// The folders walked (after dropping those inside another on the same disk).
    pub roots: Vec<String>,
    pub repos: Vec<RepoAtRisk>,
    pub weights: Vec<WeightItem>,
    /// `null` when this instance was never backed up (everything is at risk then).
    pub changed_since_last_backup: Option<ChangedFiles>,
    pub environments: Vec<Environment>,
    pub gpu_processes: Vec<GpuWork>,
    pub disks: Vec<DiskUse>,
    pub notes: Vec<ScanNote>,
    /// The script reached its end (a cut link or a killed script leaves a partial answer).
    pub complete: bool,
}
