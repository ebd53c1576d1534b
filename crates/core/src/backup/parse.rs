//! The scan script's answer into an [`AtRiskReport`]: pure, so it is tested on captured
//! outputs. The instance is untrusted: any record may be missing, cut, repeated or nonsense;
//! such records are skipped, numbers that do not parse count as absent, and the lists are
//! capped, so nothing it sends can crash us or hold unbounded memory.

use chrono::{DateTime, Utc};

use super::report::{
    AtRiskReport, ChangedFiles, DiskKind, DiskUse, Environment, GpuWork, RepoAtRisk, ScanNote,
    WeightItem,
};
use super::script::{MAX_REPOS, MAX_WEIGHTS};
use crate::probe::nvidia_smi::parse_compute_apps_csv;

/// Where the provider's disks are mounted, to tell which items a saved image or a release
/// takes with it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StorageLayout {
    pub data_disk: Option<String>,
    pub file_storage: Option<String>,
}

/// Most records of any one kind kept (beyond the script's own caps, for a lying instance).
const MAX_RECORDS: usize = 20_000;

fn under(path: &str, folder: &str) -> bool {
    let folder = folder.trim_end_matches('/');
    !folder.is_empty()
        && (path == folder
            || path
                .strip_prefix(folder)
                .is_some_and(|r| r.starts_with('/')))
}

fn number<T: std::str::FromStr>(text: &str) -> Option<T> {
    text.trim().parse().ok()
}

/// `1700000000.1234567890` (find's `%T@`) or whole seconds as a time.
fn epoch(text: &str) -> Option<DateTime<Utc>> {
    let whole = text.trim().split('.').next()?;
    let seconds: i64 = whole.parse().ok()?;
    (seconds > 0)
        .then(|| DateTime::from_timestamp(seconds, 0))
        .flatten()
}

/// The mount point holding `path`: the longest mount that is a prefix of it.
fn mount_of<'a>(disks: &'a [DiskUse], path: &str) -> Option<&'a DiskUse> {
    disks
        .iter()
        .filter(|d| d.mount == "/" || under(path, &d.mount))
        .max_by_key(|d| d.mount.len())
}

fn disk_kind(layout: &StorageLayout, disks: &[DiskUse], path: &str) -> DiskKind {
    if layout
        .file_storage
        .as_deref()
        .is_some_and(|f| under(path, f))
    {
        return DiskKind::FileStorage;
    }
    if layout.data_disk.as_deref().is_some_and(|d| under(path, d)) {
        return DiskKind::DataDisk;
    }
    match mount_of(disks, path) {
        Some(disk) if disk.mount != "/" => DiskKind::DataDisk,
        _ => DiskKind::System,
    }
}

fn parse_df(line: &str) -> Option<(String, u64, u64, u64, String)> {
    let mut words = line.split_whitespace();
    let filesystem = words.next()?.to_owned();
    let size = number(words.next()?)?;
    let used = number(words.next()?)?;
    let available = number(words.next()?)?;
    let _percent = words.next()?;
    let mount = words.collect::<Vec<_>>().join(" ");
    (!mount.is_empty()).then_some((filesystem, size, used, available, mount))
}

/// Read the script's output. `layout` names the provider's disks.
pub fn parse_scan(output: &[u8], layout: &StorageLayout) -> AtRiskReport {
    let text = String::from_utf8_lossy(output);
    let mut report = AtRiskReport {
        home: None,
        roots: Vec::new(),
        repos: Vec::new(),
        weights: Vec::new(),
        changed_since_last_backup: None,
        environments: Vec::new(),
        gpu_processes: Vec::new(),
        disks: Vec::new(),
        notes: Vec::new(),
        complete: false,
    };
    let mut cwds: Vec<(u32, String)> = Vec::new();
    let mut checkpoints: Vec<WeightItem> = Vec::new();
    for record in text.split('\0') {
        let record = record.trim_start_matches('\n');
        let Some((kind, rest)) = record.split_once('\t') else {
            continue;
        };
        match kind {
            "H" => report.home = Some(rest.to_owned()).filter(|h| !h.is_empty()),
            "R" if report.roots.len() < MAX_RECORDS => report.roots.push(rest.to_owned()),
            "M" if report.notes.len() < MAX_RECORDS => report.notes.push(ScanNote {
                code: "scan.root_missing".into(),
                path: Some(rest.to_owned()),
                days: None,
                count: None,
                owner: None,
                detail: format!("{rest} is not a folder on the instance; it was not scanned"),
            }),
            "O" if report.notes.len() < MAX_RECORDS => {
                if let Some((owner, path)) = rest.split_once('\t') {
                    report.notes.push(ScanNote {
                        code: "scan.repo_not_owned".into(),
                        path: Some(path.to_owned()),
                        days: None,
                        count: None,
                        owner: Some(owner.to_owned()),
                        detail: format!("{path}: not scanned: owned by {owner}"),
                    });
                }
            }
            "A" => {
                for process in parse_compute_apps_csv(rest).into_iter().take(MAX_RECORDS) {
                    if report.gpu_processes.iter().all(|p| p.pid != process.pid) {
                        report.gpu_processes.push(GpuWork {
                            pid: process.pid,
                            name: process.name,
                            used_memory_mib: process.used_memory_mib,
                            cwd: None,
                        });
                    }
                }
            }
            "P" => {
                if let Some((pid, cwd)) = rest.split_once('\t') {
                    if let Some(pid) = number(pid) {
                        if cwds.len() < MAX_RECORDS {
                            cwds.push((pid, cwd.to_owned()));
                        }
                    }
                }
            }
            "G" if report.repos.len() < MAX_REPOS => {
                let fields: Vec<&str> = rest.splitn(7, '\t').collect();
                if let [remote, unpushed, changed, untracked, stashes, branch, path] = fields[..] {
                    if path.is_empty() || report.repos.iter().any(|r| r.path == path) {
                        continue;
                    }
                    report.repos.push(RepoAtRisk {
                        path: path.to_owned(),
                        branch: Some(branch.to_owned()).filter(|b| !b.is_empty()),
                        has_remote: remote == "1",
                        unpushed_commits: number(unpushed).unwrap_or(0),
                        uncommitted_files: number(changed).unwrap_or(0),
                        untracked_files: number(untracked).unwrap_or(0),
                        stashes: number(stashes).unwrap_or(0),
                        disk: DiskKind::System,
                    });
                }
            }
            "W" if report.weights.len() < MAX_WEIGHTS => {
                let fields: Vec<&str> = rest.splitn(3, '\t').collect();
                if let [bytes, modified, path] = fields[..] {
                    if let Some(bytes) = number(bytes) {
                        if !path.is_empty() && report.weights.iter().all(|w| w.path != path) {
                            report.weights.push(WeightItem {
                                path: path.to_owned(),
                                bytes,
                                folder: false,
                                modified: epoch(modified),
                                disk: DiskKind::System,
                            });
                        }
                    }
                }
            }
            "C" if checkpoints.len() < MAX_WEIGHTS => {
                if let Some((bytes, path)) = rest.split_once('\t') {
                    if !path.is_empty() && checkpoints.iter().all(|c| c.path != path) {
                        checkpoints.push(WeightItem {
                            path: path.to_owned(),
                            bytes: number(bytes).unwrap_or(0),
                            folder: true,
                            modified: None,
                            disk: DiskKind::System,
                        });
                    }
                }
            }
            "N" => {
                let fields: Vec<&str> = rest.split('\t').collect();
                if let [files, bytes, newest] = fields[..] {
                    report.changed_since_last_backup = Some(ChangedFiles {
                        files: number(files).unwrap_or(0),
                        bytes: number(bytes).unwrap_or(0),
                        newest: epoch(newest),
                    });
                }
            }
            "D" if report.disks.len() < 256 => {
                if let Some((filesystem, size, used, available, mount)) = parse_df(rest) {
                    if report.disks.iter().all(|d| d.mount != mount) {
                        report.disks.push(DiskUse {
                            mount,
                            filesystem,
                            size_bytes: size,
                            used_bytes: used,
                            available_bytes: available,
                            kind: DiskKind::System,
                        });
                    }
                }
            }
            "E" if report.environments.len() < 256 => {
                let fields: Vec<&str> = rest.splitn(3, '\t').collect();
                match fields[..] {
                    ["conda", path] if !path.is_empty() => {
                        let name = path.rsplit('/').next().unwrap_or(path);
                        report.environments.push(Environment {
                            kind: "conda".into(),
                            name: if path.contains("/envs/") {
                                name
                            } else {
                                "base"
                            }
                            .to_owned(),
                            path: Some(path.to_owned()),
                            packages: None,
                        });
                    }
                    ["pip", count, python] => report.environments.push(Environment {
                        kind: "pip".into(),
                        name: python.rsplit('/').next().unwrap_or(python).to_owned(),
                        path: Some(python.to_owned()),
                        packages: number(count),
                    }),
                    _ => {}
                }
            }
            "T" => {
                let (what, count) = rest.split_once('\t').unwrap_or((rest, ""));
                let detail = match what {
                    "weights" => "more weight files than the list shows; the largest folders are worth checking by hand",
                    "repos" => "more git repositories than the list shows",
                    "no_git" => "git repositories were found but git is not installed on the instance",
                    _ => continue,
                };
                report.notes.push(ScanNote {
                    code: format!("scan.truncated_{what}"),
                    path: None,
                    days: None,
                    count: number(count),
                    owner: None,
                    detail: detail.to_owned(),
                });
            }
            "X" => report.complete = true,
            _ => {}
        }
    }
    for process in &mut report.gpu_processes {
        process.cwd = cwds
            .iter()
            .find(|(pid, _)| *pid == process.pid)
            .map(|(_, cwd)| cwd.clone());
    }
    // A weight file inside a checkpoint folder is saved with the folder; list the folder once.
    report
        .weights
        .retain(|w| !checkpoints.iter().any(|c| under(&w.path, &c.path)));
    report.weights.extend(checkpoints);
    report
        .weights
        .sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.path.cmp(&b.path)));
    let disks = report.disks.clone();
    for disk in &mut report.disks {
        disk.kind = disk_kind(layout, &disks, &disk.mount);
    }
    for repo in &mut report.repos {
        repo.disk = disk_kind(layout, &disks, &repo.path);
    }
    for weight in &mut report.weights {
        weight.disk = disk_kind(layout, &disks, &weight.path);
    }
    report.repos.sort_by(|a, b| a.path.cmp(&b.path));
    report
}

#[cfg(test)]
mod tests;
