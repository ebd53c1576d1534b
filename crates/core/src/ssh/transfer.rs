//! Copying files and folders to and from the instance over SFTP, resuming partial copies and
//! proving each copy with SHA-256 on both sides.
//!
//! Data flows through one large buffer per file (no `tokio::io::copy`, whose 8 KiB buffer
//! starves the pipelined SFTP requests), and uploads end with `shutdown()`, which waits for every
//! write acknowledgement so a full disk on the instance is an error here, not a silent loss.

use std::path::Path;
use std::time::{Duration, Instant};

use russh_sftp::client::SftpSession;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

use super::file_io::{local_error, sftp_error, within, Copied, Planned, CHUNK};
use super::listing::{plan_download, Listing};
use super::sftp::{
    remote_join, remote_path, ProgressSink, ProgressThrottle, Sftp, TransferOptions, TransferReport,
};
use super::target::SshTarget;
use super::upload::{upload_file, TWO_LANES_FROM};
use super::SshError;
use crate::target::CommandSpec;

impl SshTarget {
    /// Copy a local file or folder to exactly `remote` (a folder's contents go into `remote`).
    /// After a failure, calling it again resumes where the copy stopped.
    pub async fn upload(
        &self,
        local: &Path,
        remote: &str,
        options: TransferOptions,
        progress: ProgressSink<'_>,
    ) -> Result<TransferReport, SshError> {
        let result = self.upload_once(local, remote, options, progress).await;
        self.forget_connection_after(&result).await;
        result
    }

    /// Copy a remote file or folder to exactly `local`. After a failure, calling it again
    /// resumes where the copy stopped.
    pub async fn download(
        &self,
        remote: &str,
        local: &Path,
        options: TransferOptions,
        progress: ProgressSink<'_>,
    ) -> Result<TransferReport, SshError> {
        let result = self.download_once(remote, local, options, progress).await;
        self.forget_connection_after(&result).await;
        result
    }

    /// A stalled transfer means the link is down even if TCP has not noticed: dial afresh next
    /// time instead of queueing behind the dead connection.
    async fn forget_connection_after<T>(&self, result: &Result<T, SshError>) {
        if let Err(SshError::TransferStalled { .. } | SshError::Disconnected { .. }) = result {
            self.forget_connection().await;
        }
    }

    async fn upload_once(
        &self,
        local: &Path,
        remote: &str,
        options: TransferOptions,
        progress: ProgressSink<'_>,
    ) -> Result<TransferReport, SshError> {
        let started = Instant::now();
        let remote = remote_path(remote);
        let sftp = self.sftp().await?;
        let (plan, dirs) = plan_upload(local, &remote)?;
        let second = if plan.iter().any(|p| p.size >= TWO_LANES_FROM) {
            self.spare_sftp().await
        } else {
            None
        };
        for dir in &dirs {
            ensure_remote_dir(&sftp.session, dir).await?;
        }
        let mut throttle = ProgressThrottle::new(
            progress,
            plan.iter().map(|p| p.size).sum(),
            plan.len() as u32,
        );
        throttle.emit();
        let mut resumed_bytes = 0;
        let mut local_sums = Vec::with_capacity(plan.len());
        for file in &plan {
            throttle.state.current = file.local.display().to_string();
            let copied = upload_file(
                &lanes_for(file, &sftp, second.as_ref()),
                file,
                options.resume,
                options.stall_timeout,
                &mut throttle,
            )
            .await?;
            resumed_bytes += copied.resumed;
            local_sums.push(copied);
            throttle.state.files_done += 1;
        }
        if options.verify {
            let remote_paths: Vec<&str> = plan.iter().map(|p| p.remote.as_str()).collect();
            let remote_sums = self.remote_sha256(&remote_paths).await?;
            for (index, file) in plan.iter().enumerate() {
                if remote_sums[index] == local_sums[index].sha256 {
                    continue;
                }
                if local_sums[index].resumed == 0 {
                    return Err(mismatch(
                        file,
                        &local_sums[index].sha256,
                        &remote_sums[index],
                    ));
                }
                // The partial copy we resumed from was not a prefix of this file: start over.
                throttle.state.bytes_done = throttle.state.bytes_done.saturating_sub(file.size);
                let copied = upload_file(
                    &lanes_for(file, &sftp, second.as_ref()),
                    file,
                    false,
                    options.stall_timeout,
                    &mut throttle,
                )
                .await?;
                resumed_bytes -= local_sums[index].resumed;
                let again = self.remote_sha256(&[file.remote.as_str()]).await?;
                if again[0] != copied.sha256 {
                    return Err(mismatch(file, &copied.sha256, &again[0]));
                }
            }
        }
        throttle.emit();
        Ok(TransferReport {
            files: plan.len() as u32,
            bytes: throttle.state.bytes_total,
            resumed_bytes,
            verified: options.verify,
            seconds: started.elapsed().as_secs_f64(),
            skipped_links: 0,
            skipped_links_named: Vec::new(),
        })
    }

    async fn download_once(
        &self,
        remote: &str,
        local: &Path,
        options: TransferOptions,
        progress: ProgressSink<'_>,
    ) -> Result<TransferReport, SshError> {
        let started = Instant::now();
        let remote = remote_path(remote);
        // Listed on a session of its own, closed before the copy takes a channel.
        let listing = {
            let lister = self.raw_sftp().await?;
            plan_download(&lister, &remote, local, options.stall_timeout).await?
        };
        let Listing {
            files: plan,
            dirs,
            links,
            links_named,
        } = listing;
        let sftp = self.sftp().await?;
        for dir in &dirs {
            std::fs::create_dir_all(dir).map_err(|err| local_error(dir, &err))?;
        }
        // The remote files are complete already: hash them while we copy.
        let remote_paths: Vec<&str> = plan.iter().map(|p| p.remote.as_str()).collect();
        let remote_sums = async {
            if options.verify {
                self.remote_sha256(&remote_paths).await.map(Some)
            } else {
                Ok(None)
            }
        };
        let copy_all = async {
            let mut throttle = ProgressThrottle::new(
                progress,
                plan.iter().map(|p| p.size).sum(),
                plan.len() as u32,
            );
            throttle.emit();
            let mut copied = Vec::with_capacity(plan.len());
            for file in &plan {
                throttle.state.current = file.remote.clone();
                copied.push(
                    download_file(
                        &sftp.session,
                        file,
                        options.resume,
                        options.stall_timeout,
                        &mut throttle,
                    )
                    .await?,
                );
                throttle.state.files_done += 1;
            }
            throttle.emit();
            Ok::<_, SshError>(copied)
        };
        // The first failure (a stalled copy, a dropped link) ends both.
        let (remote_sums, mut copied) = tokio::try_join!(remote_sums, copy_all)?;
        if let Some(remote_sums) = remote_sums {
            for (index, file) in plan.iter().enumerate() {
                if remote_sums[index] == copied[index].sha256 {
                    continue;
                }
                if copied[index].resumed == 0 {
                    return Err(mismatch(file, &copied[index].sha256, &remote_sums[index]));
                }
                let silent = |_: &super::sftp::TransferProgress| {};
                let mut throttle = ProgressThrottle::new(&silent, file.size, 1);
                copied[index] = download_file(
                    &sftp.session,
                    file,
                    false,
                    options.stall_timeout,
                    &mut throttle,
                )
                .await?;
                if remote_sums[index] != copied[index].sha256 {
                    return Err(mismatch(file, &copied[index].sha256, &remote_sums[index]));
                }
            }
        }
        Ok(TransferReport {
            files: plan.len() as u32,
            bytes: plan.iter().map(|p| p.size).sum(),
            resumed_bytes: copied.iter().map(|c| c.resumed).sum(),
            verified: options.verify,
            seconds: started.elapsed().as_secs_f64(),
            skipped_links: links,
            skipped_links_named: links_named,
        })
    }

    /// SHA-256 of remote files, in order, with one `sha256sum` per batch of paths.
    pub async fn remote_sha256(&self, paths: &[&str]) -> Result<Vec<String>, SshError> {
        let mut sums = Vec::with_capacity(paths.len());
        for batch in paths.chunks(200) {
            let mut words = vec!["sha256sum", "--"];
            words.extend(batch.iter().copied());
            let spec = CommandSpec::new(crate::shell::join(words))
                .timeout(std::time::Duration::from_secs(3600));
            let out = self.exec(&spec).await?;
            if !out.success() {
                return Err(sftp_error(
                    batch.first().copied().unwrap_or_default(),
                    format!(
                        "sha256sum failed on the instance: {}",
                        out.stderr_text().trim()
                    ),
                ));
            }
            // One line per file, in argument order; the hash is the first 64 characters.
            for (line, path) in out.stdout_text().lines().zip(batch) {
                let hash = line.trim_start_matches('\\').get(..64).unwrap_or_default();
                if hash.len() != 64 {
                    return Err(sftp_error(path, "sha256sum printed no hash"));
                }
                sums.push(hash.to_ascii_lowercase());
            }
        }
        if sums.len() != paths.len() {
            return Err(sftp_error("", "sha256sum skipped some files"));
        }
        Ok(sums)
    }
}

/// The sessions one file is sent over: a large file gets the second one, if there is one.
fn lanes_for<'s>(
    file: &Planned,
    first: &'s Sftp,
    second: Option<&'s Sftp>,
) -> Vec<&'s SftpSession> {
    match second {
        Some(second) if file.size >= TWO_LANES_FROM => vec![&first.session, &second.session],
        _ => vec![&first.session],
    }
}

fn mismatch(file: &Planned, local: &str, remote: &str) -> SshError {
    SshError::ChecksumMismatch {
        path: file.remote.clone(),
        local: local.to_owned(),
        remote: remote.to_owned(),
    }
}

/// Files (with sizes) and folders to create for uploading `local` to `remote`.
fn plan_upload(local: &Path, remote: &str) -> Result<(Vec<Planned>, Vec<String>), SshError> {
    let meta = std::fs::metadata(local).map_err(|err| local_error(local, &err))?;
    if meta.is_file() {
        let planned = Planned {
            local: local.to_owned(),
            remote: remote.to_owned(),
            size: meta.len(),
        };
        return Ok((vec![planned], Vec::new()));
    }
    let mut files = Vec::new();
    let mut dirs = vec![remote.to_owned()];
    let mut stack = vec![(local.to_owned(), remote.to_owned())];
    while let Some((dir, remote_dir)) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .map_err(|err| local_error(&dir, &err))?
            .collect::<Result<_, _>>()
            .map_err(|err| local_error(&dir, &err))?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let target = remote_join(&remote_dir, &name);
            // Follows symlinks, like scp -r: what the user sees is what gets copied.
            let meta = std::fs::metadata(&path).map_err(|err| local_error(&path, &err))?;
            if meta.is_dir() {
                dirs.push(target.clone());
                stack.push((path, target));
            } else if meta.is_file() {
                files.push(Planned {
                    local: path,
                    remote: target,
                    size: meta.len(),
                });
            }
        }
    }
    Ok((files, dirs))
}

async fn ensure_remote_dir(sftp: &SftpSession, dir: &str) -> Result<(), SshError> {
    match sftp.metadata(dir).await {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(sftp_error(dir, "exists and is not a folder")),
        Err(_) => sftp
            .create_dir(dir)
            .await
            .map_err(|err| sftp_error(dir, err)),
    }
}

async fn download_file(
    sftp: &SftpSession,
    file: &Planned,
    resume: bool,
    stall: Duration,
    progress: &mut ProgressThrottle<'_>,
) -> Result<Copied, SshError> {
    let local_size = if resume {
        std::fs::metadata(&file.local)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .filter(|size| *size <= file.size)
            .unwrap_or(0)
    } else {
        0
    };
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; CHUNK];
    let mut local = if local_size > 0 {
        // Hash what is already here, then append the rest.
        let mut existing = tokio::fs::File::open(&file.local)
            .await
            .map_err(|err| local_error(&file.local, &err))?;
        let mut left = local_size;
        while left > 0 {
            let want = usize::try_from(left.min(CHUNK as u64)).unwrap_or(CHUNK);
            let n = existing
                .read(&mut buffer[..want])
                .await
                .map_err(|err| local_error(&file.local, &err))?;
            if n == 0 {
                break;
            }
            hasher.update(&buffer[..n]);
            left -= n as u64;
        }
        tokio::fs::OpenOptions::new()
            .append(true)
            .open(&file.local)
            .await
    } else {
        tokio::fs::File::create(&file.local).await
    }
    .map_err(|err| local_error(&file.local, &err))?;
    let mut remote = sftp
        .open(file.remote.clone())
        .await
        .map_err(|err| sftp_error(&file.remote, err))?;
    if local_size > 0 {
        remote
            .seek(std::io::SeekFrom::Start(local_size))
            .await
            .map_err(|err| sftp_error(&file.remote, err))?;
    }
    progress.advance(local_size);
    let mut received = local_size;
    loop {
        let n = within(stall, &file.remote, remote.read(&mut buffer)).await?;
        if n == 0 {
            break;
        }
        // The size was announced when the copy was planned; a file that keeps growing (a log
        // still being written, or a server that never ends the file) would fill the disk here.
        received += n as u64;
        if received > file.size {
            return Err(SshError::SizeExceeded {
                path: file.remote.clone(),
                announced: file.size,
            });
        }
        hasher.update(&buffer[..n]);
        local
            .write_all(&buffer[..n])
            .await
            .map_err(|err| local_error(&file.local, &err))?;
        progress.advance(n as u64);
    }
    local
        .flush()
        .await
        .map_err(|err| local_error(&file.local, &err))?;
    Ok(Copied {
        sha256: hex::encode(hasher.finalize()),
        resumed: local_size,
    })
}
