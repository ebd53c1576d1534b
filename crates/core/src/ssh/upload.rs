//! Sending one file to the instance, over one SFTP channel or, for large files, two.
//!
//! sshd gives each session channel a 2 MiB receive window, so one channel can have at most
//! 2 MiB on the way: at 50 ms RTT that caps an upload near 40 MB/s however well the requests are
//! pipelined. A large file's 256 KiB slices therefore alternate between two channels (two
//! windows, two sftp-server processes). Writes of different channels may land out of order, so a
//! partial copy can have holes near its end: resuming starts that far back, and the SHA-256 check
//! proves the result either way.

use std::time::{Duration, Instant};

use russh_sftp::client::fs::File;
use russh_sftp::client::SftpSession;
use russh_sftp::protocol::{FileAttributes, OpenFlags};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

use super::file_io::{local_error, sftp_error, within, Copied, Planned, CHUNK};
use super::sftp::{ProgressThrottle, BYTES_IN_FLIGHT};
use super::SshError;

/// One SFTP write request's worth of data.
const ACK_SLICE: usize = 256 * 1024;
/// Files from this size on are sent over two channels when a second one is free. Large enough
/// that resuming [`OUT_OF_ORDER_SPAN`] early costs at most a quarter of the file.
pub(crate) const TWO_LANES_FROM: u64 = 128 * 1024 * 1024;
/// How far before the end of a partial copy holes can be: every write still queued on both
/// channels when the link dropped (the writer alternates slices, so neither gets further ahead).
const OUT_OF_ORDER_SPAN: u64 = 2 * BYTES_IN_FLIGHT;

/// Where to start sending when `remote_size` bytes of the file are already on the instance.
fn resume_from(remote_size: u64, file_size: u64) -> u64 {
    if file_size >= TWO_LANES_FROM {
        remote_size.saturating_sub(OUT_OF_ORDER_SPAN)
    } else {
        remote_size
    }
}

/// Copy `file` to the instance over `sessions` (one or two; slices alternate between them).
pub(crate) async fn upload_file(
    sessions: &[&SftpSession],
    file: &Planned,
    resume: bool,
    stall: Duration,
    progress: &mut ProgressThrottle<'_>,
) -> Result<Copied, SshError> {
    let Some(first) = sessions.first() else {
        return Err(sftp_error(&file.remote, "no SFTP session to upload with"));
    };
    let remote_size = if resume {
        first
            .metadata(file.remote.clone())
            .await
            .ok()
            .filter(|m| !m.is_dir())
            .map(|m| m.len())
            .filter(|size| *size <= file.size)
            .unwrap_or(0)
    } else {
        0
    };
    let start = resume_from(remote_size, file.size);
    let mut local = tokio::fs::File::open(&file.local)
        .await
        .map_err(|err| local_error(&file.local, &err))?;
    let mut lanes = Vec::with_capacity(sessions.len());
    for (index, session) in sessions.iter().enumerate() {
        lanes.push(open_lane(session, &file.remote, index == 0 && start == 0).await?);
    }
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; CHUNK];
    let mut offset = 0u64;
    let started = Instant::now();
    let mut sent = 0u64;
    progress.advance(start);
    loop {
        let n = local
            .read(&mut buffer)
            .await
            .map_err(|err| local_error(&file.local, &err))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        // The part already on the instance is hashed, not sent.
        let skip = usize::try_from(start.saturating_sub(offset).min(n as u64)).unwrap_or(n);
        let mut at = offset + skip as u64;
        offset += n as u64;
        // Small slices: each waits for at most one acknowledgement, so a slow but live link
        // never looks stalled.
        for slice in buffer[skip..n].chunks(ACK_SLICE) {
            let lane = usize::try_from((at / ACK_SLICE as u64) % lanes.len() as u64).unwrap_or(0);
            let remote = &mut lanes[lane];
            within(
                stall,
                &file.remote,
                remote.seek(std::io::SeekFrom::Start(at)),
            )
            .await?;
            within(stall, &file.remote, remote.write_all(slice)).await?;
            at += slice.len() as u64;
            sent += slice.len() as u64;
            progress.advance(slice.len() as u64);
        }
    }
    // Closing waits for every write still in flight; allow what they need at the rate seen.
    let rate = sent as f64 / started.elapsed().as_secs_f64().max(0.001);
    let drain = sent.min(BYTES_IN_FLIGHT * lanes.len() as u64) as f64 / rate.max(1.0);
    let allowance = stall + Duration::from_secs_f64((drain * 2.0).min(3600.0));
    let closing = futures::future::join_all(lanes.iter_mut().map(|remote| remote.shutdown()));
    within(allowance, &file.remote, async {
        closing
            .await
            .into_iter()
            .collect::<std::io::Result<Vec<()>>>()
    })
    .await?;
    Ok(Copied {
        sha256: hex::encode(hasher.finalize()),
        resumed: start,
    })
}

/// Open the remote file for writing; `fresh` creates or empties it (only the first channel
/// does, before any other opens it).
async fn open_lane(session: &SftpSession, remote: &str, fresh: bool) -> Result<File, SshError> {
    let opened = if fresh {
        session
            .open_with_flags_and_attributes(
                remote.to_owned(),
                OpenFlags::CREATE | OpenFlags::TRUNCATE | OpenFlags::WRITE,
                FileAttributes::empty(),
            )
            .await
    } else {
        session
            .open_with_flags_and_attributes(
                remote.to_owned(),
                OpenFlags::CREATE | OpenFlags::WRITE,
                FileAttributes::empty(),
            )
            .await
    };
    opened.map_err(|err| sftp_error(remote, err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_files_resume_where_the_copy_stopped() {
        assert_eq!(resume_from(1000, 5000), 1000);
        assert_eq!(resume_from(0, 5000), 0);
    }

    #[test]
    fn large_files_resume_before_any_hole_two_channels_can_leave() {
        let size = 1024 * 1024 * 1024;
        assert_eq!(
            resume_from(100 * 1024 * 1024, size),
            100 * 1024 * 1024 - OUT_OF_ORDER_SPAN
        );
        assert_eq!(resume_from(OUT_OF_ORDER_SPAN / 2, size), 0);
    }
}
