//! SFTP sessions tuned for bulk transfers, and the progress reports transfers emit.
//!
//! russh-sftp's defaults move 32 KiB per request with 16 in flight; on a link with any latency
//! that leaves the pipe mostly empty. We ask for the largest requests OpenSSH's sftp-server
//! accepts (its `limits@openssh.com` caps them; russh-sftp honours that) and keep 64 in flight,
//! on a channel with a 16 MiB window (see `connect`).

use std::time::{Duration, Instant};

use russh_sftp::client::SftpSession;
use serde::Serialize;
use tokio::sync::OwnedSemaphorePermit;
use ts_rs::TS;

use super::target::SshTarget;
use super::SshError;

/// Requests in flight per open file.
const REQUESTS_IN_FLIGHT: usize = 64;
/// Largest SFTP packet; OpenSSH's sftp-server allows 256 KiB.
const MAX_PACKET: u32 = 256 * 1024;
/// Upload bytes that can be sent but not yet acknowledged.
pub(crate) const BYTES_IN_FLIGHT: u64 = REQUESTS_IN_FLIGHT as u64 * MAX_PACKET as u64;
/// How often a transfer reports progress at most (first and last reports always go out).
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// An SFTP session and the channel slot it occupies.
pub(crate) struct Sftp {
    pub(crate) session: SftpSession,
    _permit: OwnedSemaphorePermit,
}

impl SshTarget {
    pub(crate) async fn sftp(&self) -> Result<Sftp, SshError> {
        let (channel, permit) = self.session_channel().await?;
        let failed = |message: String| SshError::Sftp {
            path: String::new(),
            message,
        };
        channel
            .request_subsystem(true, "sftp")
            .await
            .map_err(|err| failed(format!("the server has no SFTP subsystem: {err}")))?;
        let config = russh_sftp::client::Config {
            max_packet_len: MAX_PACKET + 1024,
            max_concurrent_reads: REQUESTS_IN_FLIGHT,
            max_concurrent_writes: REQUESTS_IN_FLIGHT,
            max_write_packet_len: MAX_PACKET,
            request_timeout_secs: 60,
        };
        let session = SftpSession::new_with_config(channel.into_stream(), config)
            .await
            .map_err(|err| failed(format!("cannot start SFTP: {err}")))?;
        Ok(Sftp {
            session,
            _permit: permit,
        })
    }
}

impl SshTarget {
    /// A second SFTP session for a large upload, when a channel is free and the server agrees;
    /// otherwise the upload simply uses one.
    pub(crate) async fn spare_sftp(&self) -> Option<Sftp> {
        if self.free_channels() == 0 {
            return None;
        }
        match self.sftp().await {
            Ok(sftp) => Some(sftp),
            Err(err) => {
                tracing::debug!(%err, "no second SFTP channel; uploading over one");
                None
            }
        }
    }
}

/// Where a transfer stands. Sent to the progress sink.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct TransferProgress {
    /// The file being copied (remote path for downloads, local path for uploads).
    pub current: String,
    #[ts(type = "number")]
    pub bytes_done: u64,
    #[ts(type = "number")]
    pub bytes_total: u64,
    pub files_done: u32,
    pub files_total: u32,
}

/// What a finished transfer did.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct TransferReport {
    pub files: u32,
    /// Bytes of the copied files, including parts that were already there.
    #[ts(type = "number")]
    pub bytes: u64,
    /// Bytes skipped because a partial copy was resumed.
    #[ts(type = "number")]
    pub resumed_bytes: u64,
    /// Every file's SHA-256 was compared on both sides.
    pub verified: bool,
    pub seconds: f64,
    /// Symbolic links in a downloaded folder, left alone (SFTP lists them without following;
    /// what they point to may be outside the folder or missing).
    #[ts(type = "number")]
    pub skipped_links: u64,
    /// The first few of them (remote paths).
    pub skipped_links_named: Vec<String>,
}

impl TransferReport {
    /// Bytes actually moved per second.
    pub fn throughput_bytes_per_second(&self) -> f64 {
        let moved = self.bytes.saturating_sub(self.resumed_bytes) as f64;
        if self.seconds > 0.0 {
            moved / self.seconds
        } else {
            0.0
        }
    }
}

/// Transfer behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferOptions {
    /// Continue a partial copy left by an interrupted transfer instead of starting over.
    pub resume: bool,
    /// Compare SHA-256 on both sides (`sha256sum` on the instance).
    pub verify: bool,
    /// Give up (so the copy can be resumed) when no data moves for this long.
    pub stall_timeout: Duration,
}

impl Default for TransferOptions {
    fn default() -> Self {
        Self {
            resume: true,
            verify: true,
            stall_timeout: Duration::from_secs(30),
        }
    }
}

/// The sink transfers report to: a plain closure, so the CLI prints and the UI forwards to a
/// Tauri channel through the same core code.
pub type ProgressSink<'a> = &'a (dyn Fn(&TransferProgress) + Send + Sync);

/// Rate-limits progress reports; the first and the final report always go out.
pub(crate) struct ProgressThrottle<'a> {
    sink: ProgressSink<'a>,
    last: Option<Instant>,
    pub(crate) state: TransferProgress,
}

impl<'a> ProgressThrottle<'a> {
    pub(crate) fn new(sink: ProgressSink<'a>, bytes_total: u64, files_total: u32) -> Self {
        Self {
            sink,
            last: None,
            state: TransferProgress {
                current: String::new(),
                bytes_done: 0,
                bytes_total,
                files_done: 0,
                files_total,
            },
        }
    }

    pub(crate) fn advance(&mut self, bytes: u64) {
        self.state.bytes_done += bytes;
        if self
            .last
            .is_none_or(|last| last.elapsed() >= PROGRESS_EVERY)
        {
            self.emit();
        }
    }

    pub(crate) fn emit(&mut self) {
        self.last = Some(Instant::now());
        (self.sink)(&self.state);
    }
}

/// Join remote path parts with `/` whatever this computer's separator is.
pub(crate) fn remote_join(dir: &str, name: &str) -> String {
    if dir.is_empty() || dir == "." {
        name.to_owned()
    } else if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// SFTP resolves relative paths against the login directory, so `~/x` becomes `x`.
pub(crate) fn remote_path(path: &str) -> String {
    match path {
        "~" | "~/" => ".".to_owned(),
        _ => path.strip_prefix("~/").unwrap_or(path).to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_paths_use_slashes_and_home_relative_tilde() {
        assert_eq!(remote_join("data", "a.bin"), "data/a.bin");
        assert_eq!(remote_join("/root/", "a.bin"), "/root/a.bin");
        assert_eq!(remote_join(".", "a.bin"), "a.bin");
        assert_eq!(remote_path("~/models/x"), "models/x");
        assert_eq!(remote_path("~"), ".");
        assert_eq!(remote_path("/abs"), "/abs");
    }

    #[test]
    fn progress_reports_the_first_update_and_throttles_the_rest() {
        let seen = std::sync::Mutex::new(Vec::new());
        let sink = |p: &TransferProgress| seen.lock().expect("lock").push(p.bytes_done);
        let mut throttle = ProgressThrottle::new(&sink, 100, 1);
        throttle.advance(10);
        throttle.advance(10);
        throttle.advance(10);
        throttle.emit();
        let seen = seen.into_inner().expect("lock");
        assert_eq!(seen.first(), Some(&10), "the first update goes out at once");
        assert_eq!(seen.last(), Some(&30), "the final state goes out");
        assert!(seen.len() < 4, "updates within 100 ms are merged: {seen:?}");
    }
}
