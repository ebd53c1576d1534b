//! Back up: find what would be lost with the instance and save it before a release (or the
//! provider's wipe of a stopped instance) takes it.
//!
//! - `script` + `parse`: the at-risk scan as one remote bash script over the chosen roots (git
//!   repositories and what is unpushed or uncommitted, weights and checkpoints, files changed
//!   since the last backup, environments, GPU processes and the folders they work in, disks),
//!   read by a pure parser that survives anything the instance prints;
//! - `provider`: what each provider keeps (data disk, file storage, wipe rule, console);
//! - `run` + `packed`: downloads with a local free-space check, SFTP (resume, SHA-256 both sides)
//!   for files and large ones, one tar stream for folders of many small files, every remote
//!   name checked by `ssh::safe_name` before anything is written;
//! - `actions`: the environment export, `git push`, the copy into the provider's file storage;
//! - `record`: every backup in SQLite, which the release check reads.
//!
//! More detail, from the old architecture map: every value in the scan script goes through
//! `shell::quote`. git runs only in repositories the scanning user owns, with no fsmonitor, hooks,
//! pager or signature check; another user's repository is listed as `scan.repo_not_owned`. The
//! roots are the home folder, the provider's data disk and the GPU processes' working folders. The
//! parser reads NUL-separated records and is fuzzed. A download is planned by one command that
//! reads the chosen paths on stdin (any number of them). Each item gets its own local name (a later
//! one with the same name gets `-2`, said in its detail). A folder that holds only symbolic links
//! is refused (`backup.only_links`), and skipped links are reported. `packed` unpacks the tar
//! stream through a bounded channel. Every entry name is checked, links and devices are refused, a
//! remote per-file SHA-256 manifest is checked, and resume skips the files already here with the
//! right hash. Records are in `store/backups.rs`.

mod actions;
mod error;
mod packed;
mod parse;
mod provider;
pub mod record;
mod report;
mod run;
mod scan;
mod script;

pub use actions::{
    copy_to_file_storage, copy_to_instance_file_storage, export_environment, git_push,
};
pub use error::BackupError;
pub use packed::{download_packed, parse_manifest, unpack, PackedReport};
pub use parse::{parse_scan, StorageLayout};
pub use provider::{provider_notes, storage_of, ProviderStorage, KNOWN_DATA_DISKS};
pub use record::{BackupItem, BackupRecord, ItemKind};
pub use report::{
    AtRiskReport, ChangedFiles, DiskKind, DiskUse, Environment, GpuWork, RepoAtRisk, ScanNote,
    WeightItem,
};
pub use run::{
    check_space, local_name, parse_plan, plan, run, BackupProgress, BackupSink, PlannedPath,
    RunRequest, PACK_BELOW_AVERAGE,
};
pub use scan::{scan, scan_recorded, InstanceContext, ScanOptions};
pub use script::{ScanScript, MAX_REPOS, MAX_WEIGHTS, SKIPPED_FOLDERS, WEIGHT_PATTERNS};
