//! `backup run`: plan the chosen paths in one command on the instance (kind, files, bytes),
//! check the local disk has room, then copy each: a file or a folder of few large files over
//! SFTP (resume, SHA-256 both sides), a folder of many small files through one tar stream
//! (`packed`). The backup is recorded with every item's checksum.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use ts_rs::TS;

use super::packed::{download_packed, shell_path};
use super::record::{self, BackupItem, BackupRecord, ItemKind};
use super::BackupError;
use crate::clock::Clock;
use crate::ssh::{check_entry_name, SshTarget, TransferOptions, TransferProgress};
use crate::store::Store;
use crate::target::{CommandSpec, OutputCollector, OutputStream};

/// A folder whose files average less than this goes through one tar stream.
pub const PACK_BELOW_AVERAGE: u64 = 8 * 1024 * 1024;
/// Room left free on the local disk beyond the backup itself.
const SPARE_BYTES: u64 = 64 * 1024 * 1024;

/// What to back up, and where to.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub remote_paths: Vec<String>,
    /// The local folder; each path lands inside it under its own name.
    pub local_dir: PathBuf,
    /// The recorded instance it belongs to (`None` for a bare target).
    pub instance: Option<String>,
}

/// Where a backup stands. Sent to the progress sink (throttled by the transfers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct BackupProgress {
    pub current: String,
    #[ts(type = "number")]
    pub bytes_done: u64,
    #[ts(type = "number")]
    pub bytes_total: u64,
    pub items_done: u32,
    pub items_total: u32,
}

pub type BackupSink<'a> = &'a (dyn Fn(&BackupProgress) + Send + Sync);

/// One chosen path as the instance describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedPath {
    pub remote: String,
    pub folder: bool,
    pub files: u64,
    pub bytes: u64,
}

impl PlannedPath {
    /// Many small files: one tar stream beats a request per file.
    pub fn packed(&self) -> bool {
        self.folder && self.files > 0 && self.bytes / self.files < PACK_BELOW_AVERAGE
    }
}

/// Read the plan's output (one line per path, in order): `F\tbytes`, `D\tfiles\tbytes`, `M`.
pub fn parse_plan(paths: &[String], output: &str) -> Result<Vec<PlannedPath>, BackupError> {
    let mut lines = output.lines();
    paths
        .iter()
        .map(|path| {
            let line = lines.next().unwrap_or("M");
            let fields: Vec<&str> = line.split('\t').collect();
            match fields[..] {
                ["F", bytes] => Ok(PlannedPath {
                    remote: path.clone(),
                    folder: false,
                    files: 1,
                    bytes: bytes.trim().parse().unwrap_or(0),
                }),
                ["D", files, bytes] => Ok(PlannedPath {
                    remote: path.clone(),
                    folder: true,
                    files: files.trim().parse().unwrap_or(0),
                    bytes: bytes.trim().parse().unwrap_or(0),
                }),
                _ => Err(BackupError::RemoteMissing { path: path.clone() }),
            }
        })
        .collect()
}

/// Reads the chosen paths from stdin, NUL-separated: thousands of them would not fit in one
/// command line (Linux refuses an argument over 128 KiB with `E2BIG`).
const PLAN_SCRIPT: &str = r#"while IFS= read -r -d '' p; do
  if [ -f "$p" ]; then printf 'F\t%s\n' "$(stat -c %s -- "$p")"
  elif [ -d "$p" ]; then find "$p" -type f -printf '%s\n' 2>/dev/null | awk 'BEGIN { n = 0; b = 0 } { n++; b += $1 } END { printf "D\t%d\t%.0f\n", n, b }'
  else echo M; fi
done"#;

fn plan_input(paths: &[String]) -> Vec<u8> {
    let mut input = Vec::new();
    for path in paths {
        input.extend_from_slice(shell_path(path).as_bytes());
        input.push(0);
    }
    input
}

/// Describe the chosen paths: one command, or SFTP when the instance runs no shell commands.
pub async fn plan(target: &SshTarget, paths: &[String]) -> Result<Vec<PlannedPath>, BackupError> {
    let spec = CommandSpec::new(PLAN_SCRIPT).timeout(Duration::from_secs(600));
    let mut collector = OutputCollector::new(spec.output_cap);
    let input = Box::new(std::io::Cursor::new(plan_input(paths)))
        as Box<dyn tokio::io::AsyncRead + Send + Unpin>;
    let exit = {
        let mut sink = |stream: OutputStream, chunk: &[u8]| collector.push(stream, chunk);
        target.exec_streaming(&spec, Some(input), &mut sink).await
    };
    match exit {
        Ok(exit) if exit.status == Some(0) => {
            parse_plan(paths, &collector.finish(exit.status).stdout_text())
        }
        _ => {
            let mut planned = Vec::new();
            for path in paths {
                planned.push(PlannedPath {
                    remote: path.clone(),
                    folder: target.remote_is_dir(path).await?,
                    files: 0,
                    bytes: 0,
                });
            }
            Ok(planned)
        }
    }
}

/// The name a remote path gets inside the local folder.
pub fn local_name(remote: &str) -> Result<String, BackupError> {
    let name = remote
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    let name = match name {
        "" | "~" | "." => "home",
        other => other,
    };
    check_entry_name(name).map_err(|reason| BackupError::BadRemotePath {
        path: remote.to_owned(),
        problem: reason.to_string(),
    })?;
    Ok(name.to_owned())
}

/// The names the chosen paths get inside the local folder, each one distinct: a later item
/// whose name an earlier one already took (`run1/checkpoint-500`, `run2/checkpoint-500`) gets
/// `-2`, `-3`, … before its extension, so neither overwrites the other or is taken for its
/// resume. Compared without case, as on the Windows and macOS disks many users back up to.
pub fn distinct_names(names: &[String]) -> Vec<String> {
    let mut taken: std::collections::HashSet<String> =
        names.iter().map(|n| n.to_lowercase()).collect();
    let mut given = std::collections::HashSet::new();
    names
        .iter()
        .map(|name| {
            if given.insert(name.to_lowercase()) {
                return name.clone();
            }
            let (stem, extension) = match name.rfind('.') {
                Some(dot) if dot > 0 => name.split_at(dot),
                _ => (name.as_str(), ""),
            };
            let unique = (2..)
                .map(|n| format!("{stem}-{n}{extension}"))
                .find(|candidate| !taken.contains(&candidate.to_lowercase()))
                .unwrap_or_else(|| name.clone());
            taken.insert(unique.to_lowercase());
            given.insert(unique.to_lowercase());
            unique
        })
        .collect()
}

/// Free bytes where `dir` is (its nearest existing ancestor).
fn free_space(dir: &Path) -> Result<u64, BackupError> {
    let mut probe = dir;
    while !probe.exists() {
        probe = probe.parent().unwrap_or(Path::new("."));
    }
    fs4::available_space(probe).map_err(|err| BackupError::local(probe, &err))
}

/// Refuse a backup that does not fit on this computer's disk.
pub fn check_space(dir: &Path, needed: u64) -> Result<(), BackupError> {
    let available = free_space(dir)?;
    if needed.saturating_add(SPARE_BYTES) > available {
        return Err(BackupError::NotEnoughSpace {
            path: dir.to_owned(),
            needed,
            available,
        });
    }
    Ok(())
}

pub(crate) fn sha256_of(path: &Path) -> Result<String, BackupError> {
    let mut file = std::fs::File::open(path).map_err(|err| BackupError::local(path, &err))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(|err| BackupError::local(path, &err))?;
    Ok(hex::encode(hasher.finalize()))
}

/// The manifest digest of a folder copied file by file (the same shape as a packed one's).
fn folder_digest(dir: &Path) -> Result<(String, u64), BackupError> {
    let mut lines = Vec::new();
    let mut stack = vec![(dir.to_owned(), String::new())];
    while let Some((folder, prefix)) = stack.pop() {
        for entry in std::fs::read_dir(&folder).map_err(|err| BackupError::local(&folder, &err))? {
            let entry = entry.map_err(|err| BackupError::local(&folder, &err))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let relative = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            let kind = entry
                .file_type()
                .map_err(|err| BackupError::local(&entry.path(), &err))?;
            if kind.is_dir() {
                stack.push((entry.path(), relative));
            } else if kind.is_file() {
                lines.push(format!("{}  {relative}\n", sha256_of(&entry.path())?));
            }
        }
    }
    lines.sort_by(|a, b| a[66..].cmp(&b[66..]));
    let mut hasher = Sha256::new();
    for line in &lines {
        hasher.update(line.as_bytes());
    }
    Ok((hex::encode(hasher.finalize()), lines.len() as u64))
}

/// Back up the chosen paths into `request.local_dir` and record it.
pub async fn run(
    store: &Store,
    target: &SshTarget,
    request: &RunRequest,
    progress: BackupSink<'_>,
    clock: &dyn Clock,
) -> Result<BackupRecord, BackupError> {
    if request.remote_paths.is_empty() {
        return Err(BackupError::NothingChosen);
    }
    if let Some(name) = &request.instance {
        record::instance_id(store, name).await?;
    }
    let names = request
        .remote_paths
        .iter()
        .map(|p| local_name(p))
        .collect::<Result<Vec<_>, _>>()?;
    let chosen_names = names;
    let names = distinct_names(&chosen_names);
    let started_at = clock.now();
    let planned = plan(target, &request.remote_paths).await?;
    let total: u64 = planned.iter().map(|p| p.bytes).sum();
    std::fs::create_dir_all(&request.local_dir).map_err(|err| BackupError::LocalFolder {
        path: request.local_dir.clone(),
        message: err.to_string(),
    })?;
    check_space(&request.local_dir, total)?;
    let done_before = AtomicU64::new(0);
    let items_total = u32::try_from(planned.len()).unwrap_or(u32::MAX);
    let mut items = Vec::with_capacity(planned.len());
    for (index, ((path, name), chosen)) in planned.iter().zip(&names).zip(&chosen_names).enumerate()
    {
        let local = request.local_dir.join(name);
        let renamed = (name != chosen)
            .then(|| format!("saved as {name}: an earlier item already took the name {chosen}"));
        let report = |current: &str, bytes: u64| {
            progress(&BackupProgress {
                current: current.to_owned(),
                bytes_done: done_before.load(Ordering::Relaxed) + bytes,
                bytes_total: total,
                items_done: u32::try_from(index).unwrap_or(u32::MAX),
                items_total,
            });
        };
        report(&path.remote, 0);
        let (item, links) = if path.packed() {
            let received = AtomicU64::new(0);
            let on_chunk = |bytes: u64| {
                let now = received.fetch_add(bytes, Ordering::Relaxed) + bytes;
                report(&path.remote, now.min(path.bytes));
            };
            let packed = download_packed(target, &path.remote, &local, &on_chunk).await?;
            let item = BackupItem {
                kind: ItemKind::PackedFolder,
                remote_path: path.remote.clone(),
                local_path: Some(local.display().to_string()),
                files: packed.files,
                bytes: packed.bytes,
                sha256: Some(packed.manifest_sha256),
                detail: (packed.skipped_files > 0).then(|| {
                    format!(
                        "{} files were already here and were kept",
                        packed.skipped_files
                    )
                }),
            };
            (item, (packed.links.count, packed.links.named))
        } else {
            let on_transfer = |p: &TransferProgress| report(&p.current, p.bytes_done);
            let sftp_path = shell_path(&path.remote);
            let copied = target
                .download(&sftp_path, &local, TransferOptions::default(), &on_transfer)
                .await?;
            let (sha256, files) = if path.folder {
                folder_digest(&local)?
            } else {
                (sha256_of(&local)?, 1)
            };
            let item = BackupItem {
                kind: if path.folder {
                    ItemKind::Folder
                } else {
                    ItemKind::File
                },
                remote_path: path.remote.clone(),
                local_path: Some(local.display().to_string()),
                files,
                bytes: copied.bytes,
                sha256: Some(sha256),
                detail: (copied.resumed_bytes > 0)
                    .then(|| format!("resumed: {} bytes were already here", copied.resumed_bytes)),
            };
            (item, (copied.skipped_links, copied.skipped_links_named))
        };
        if links.0 > 0 && item.files == 0 {
            return Err(BackupError::OnlyLinks {
                path: path.remote.clone(),
                links: links.0,
            });
        }
        let skipped = (links.0 > 0).then(|| {
            format!(
                "{} symbolic links were not followed and not saved: {}{}",
                links.0,
                links.1.join(", "),
                if links.0 > links.1.len() as u64 {
                    ", …"
                } else {
                    ""
                }
            )
        });
        let notes: Vec<String> = [renamed, item.detail.clone(), skipped]
            .into_iter()
            .flatten()
            .collect();
        let item = BackupItem {
            detail: (!notes.is_empty()).then(|| notes.join("; ")),
            ..item
        };
        done_before.fetch_add(path.bytes.max(item.bytes), Ordering::Relaxed);
        items.push(item);
    }
    progress(&BackupProgress {
        current: String::new(),
        bytes_done: done_before.load(Ordering::Relaxed),
        bytes_total: total.max(done_before.load(Ordering::Relaxed)),
        items_done: items_total,
        items_total,
    });
    record::save(
        store,
        request.instance.as_deref(),
        &target.destination().label(),
        &request.local_dir,
        started_at,
        clock.now(),
        items,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_says_which_folders_are_packed() {
        let paths = vec![
            "a".to_owned(),
            "b".to_owned(),
            "c".to_owned(),
            "d".to_owned(),
        ];
        let plan = parse_plan(&paths, "F\t10\nD\t20000\t200000000\nD\t2\t20000000000\n")
            .expect_err("d is missing");
        assert!(matches!(plan, BackupError::RemoteMissing { ref path } if path == "d"));
        let plan = parse_plan(
            &paths[..3],
            "F\t10\nD\t20000\t200000000\nD\t2\t20000000000\n",
        )
        .expect("parses");
        assert!(!plan[0].packed(), "a file is never packed");
        assert!(
            plan[1].packed(),
            "20 000 files of 10 kB go through one stream"
        );
        assert!(
            !plan[2].packed(),
            "two 10 GB files go over SFTP with resume"
        );
    }

    #[test]
    fn local_names_are_single_safe_components() {
        assert_eq!(local_name("/root/autodl-tmp/run-1/").expect("ok"), "run-1");
        assert_eq!(local_name("~").expect("ok"), "home");
        assert!(local_name("/x/..").is_err(), "`..` is refused");
    }

    #[test]
    fn same_named_items_get_distinct_names_in_order() {
        let names: Vec<String> = [
            "checkpoint-500",
            "model.bin",
            "Checkpoint-500",
            "model.bin",
            "model-2.bin",
        ]
        .map(str::to_owned)
        .into();
        assert_eq!(
            distinct_names(&names),
            [
                "checkpoint-500",
                "model.bin",
                "Checkpoint-500-2",
                "model-3.bin",
                "model-2.bin"
            ],
            "the first keeps its name; a later one never takes a name another item has"
        );
    }

    #[test]
    fn too_big_for_the_disk_is_refused_before_anything_moves() {
        let dir = tempfile::tempdir().expect("dir");
        let err = check_space(dir.path(), u64::MAX / 2).expect_err("no disk is that large");
        assert!(matches!(err, BackupError::NotEnoughSpace { .. }));
        check_space(&dir.path().join("new/sub"), 1)
            .expect("a not-yet-created folder is measured at its parent");
    }
}
