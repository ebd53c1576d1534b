//! Detached remote jobs: a script that keeps running on the instance when the SSH link drops,
//! the laptop sleeps or the app quits, and whose log can be picked up again from any byte.
//!
//! Why a module of its own: installs take long (a 3 GB wheel, a model pull) and rented links
//! drop. A job is started the way Ansible's async wrapper and VS Code's remote server start
//! theirs — its own folder under `~/.leasehold/jobs/<id>/`, `setsid` + `nohup`, all three
//! standard streams redirected, its own process group — so it needs neither systemd nor tmux
//! (AutoDL-style containers have neither). The log is a plain file; attaching streams it from a
//! byte offset and counts every byte handed on, so after a drop the next attach continues at
//! exactly that byte: nothing lost, nothing repeated. Cancel ends the whole process group (and
//! session) and says what survived. The shell text lives in [`script`]; this file runs it over
//! any [`Target`], and [`record`] keeps each job as a row in the database.
//!
//! The log stream sends a heartbeat on stderr each idle second. 3.5 s of silence counts as a dead
//! link, and `Target::link_stalled` makes the next stream dial afresh. A job whose folder has
//! vanished is `lost`. A user's own command (`job start -- CMD`, [`user_command_script`]) first
//! takes the environment of an interactive login bash (`bash -ilc 'export -p'` after a marker, 10 s
//! at most), so conda's PATH from `~/.bashrc` is there. Recipes keep sshd's plain environment.

mod error;
pub mod record;
mod script;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::target::{CommandSpec, OutputStream, Target, TargetError};

pub use error::JobError;
use script::{RemoteCancel, RemoteStatus};

/// A job's id, the same here and on the instance (it names the job folder). Letters, digits,
/// `-` and `_`, at most 64, so it is safe in a path on every instance.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JobId(String);

impl JobId {
    pub fn parse(text: &str) -> Result<Self, JobError> {
        let ok = !text.is_empty()
            && text.len() <= 64
            && !text.starts_with('-')
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if ok {
            Ok(Self(text.to_owned()))
        } else {
            Err(JobError::BadId(text.to_owned()))
        }
    }

    /// A fresh id: `j-` + UTC time to the second + 6 random hex digits, so ids sort by start
    /// time and two laptops never pick the same one.
    pub fn generate(now: chrono::DateTime<chrono::Utc>) -> Self {
        let mut random = [0u8; 3];
        // Entropy failure is not worth refusing a job over; the time still separates most ids.
        let _ = getrandom::fill(&mut random);
        Self(format!(
            "j-{}-{}",
            now.format("%Y%m%d-%H%M%S"),
            hex::encode(random)
        ))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for JobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where job folders live on the instance.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum JobRoot {
    /// `~/.leasehold/jobs` of the login user.
    #[default]
    Home,
    /// Another folder (tests; an instance whose home is read-only).
    Folder(String),
}

impl JobRoot {
    /// Shell text for the folder of `id` (every value quoted; `$HOME` left for the shell).
    pub(crate) fn dir_expr(&self, id: &JobId) -> String {
        let id = crate::shell::quote(id.as_str());
        match self {
            Self::Home => format!("\"$HOME\"/.leasehold/jobs/{id}"),
            Self::Folder(path) => format!("{}/{id}", crate::shell::quote(path)),
        }
    }
}

/// A job's state as the user sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Running,
    Succeeded,
    Failed,
    Cancelled,
    /// The instance restarted, or the job folder vanished, before an exit code was written.
    Lost,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::Lost => "lost",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Running,
            Self::Succeeded,
            Self::Failed,
            Self::Cancelled,
            Self::Lost,
        ]
        .into_iter()
        .find(|state| state.as_str() == text)
    }

    pub fn is_over(self) -> bool {
        self != Self::Running
    }
}

/// `job status --json`: exactly these four keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct JobStatus {
    pub id: String,
    pub state: JobState,
    pub exit_code: Option<i32>,
    #[ts(type = "number")]
    pub log_bytes: u64,
}

impl JobStatus {
    fn from_remote(id: &JobId, remote: &RemoteStatus) -> Self {
        let (state, exit_code) = state_of(remote);
        Self {
            id: id.to_string(),
            state,
            exit_code,
            log_bytes: remote.log_bytes,
        }
    }
}

/// The state a status reading means. Pure; the order of the checks is the contract.
fn state_of(remote: &RemoteStatus) -> (JobState, Option<i32>) {
    if !remote.folder {
        return (JobState::Lost, None);
    }
    if remote.cancelled {
        return (JobState::Cancelled, remote.exit);
    }
    match remote.exit {
        Some(0) => (JobState::Succeeded, Some(0)),
        Some(code) => (JobState::Failed, Some(code)),
        None if remote.same_boot && remote.alive => (JobState::Running, None),
        None => (JobState::Lost, None),
    }
}

/// What `cancel` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct CancelReport {
    pub status: JobStatus,
    /// The job had already ended by itself; nothing was killed.
    pub already_over: bool,
    /// TERM was not enough within the grace period; KILL was sent.
    pub killed: bool,
    /// `pid command…` of every process of the job's session still alive afterwards.
    pub left_behind: Vec<String>,
    /// The job folder (script and log) stays on the instance for reading.
    pub folder_kept: bool,
}

/// Commands that only touch small files finish quickly; a slow answer means a bad link.
const QUICK: Duration = Duration::from_secs(30);

/// The script of a user's own command (`job start -- CMD…`): the command as its words were
/// given (the remote shell reads them, as with `ssh host CMD…`), run with the environment the
/// user's interactive shell on the instance would give it (conda, CUDA, pyenv from `~/.bashrc`).
/// Recipes do not use it: they find what they need themselves and must not depend on what a
/// `.bashrc` happens to activate.
pub fn user_command_script(words: &[String]) -> String {
    script::in_shell_environment(&crate::shell::unix_newlines(&words.join(" ")))
}

/// Start `script` as job `id`. Returns once the wrapper runs (its pid recorded), not when the
/// script ends.
#[tracing::instrument(skip(target, script), err, fields(target = %target.describe()))]
pub async fn start(
    target: &dyn Target,
    root: &JobRoot,
    id: &JobId,
    script: &str,
) -> Result<JobStatus, JobError> {
    let out = target
        .run(&CommandSpec::new(script::start(root, id, script)).timeout(QUICK))
        .await?;
    match out.exit_status {
        Some(0) if out.stdout_text().trim().parse::<u32>().is_ok() => Ok(JobStatus {
            id: id.to_string(),
            state: JobState::Running,
            exit_code: None,
            log_bytes: 0,
        }),
        Some(script::EXIT_EXISTS) => Err(JobError::AlreadyExists(id.to_string())),
        Some(script::EXIT_NO_SETSID) => Err(JobError::NoSetsid),
        _ => Err(JobError::NotStarted(
            format!("{}{}", out.stderr_text().trim(), out.stdout_text().trim())
                .chars()
                .take(500)
                .collect(),
        )),
    }
}

/// Read the job's state from the instance.
#[tracing::instrument(skip(target), err, fields(target = %target.describe()))]
pub async fn status(
    target: &dyn Target,
    root: &JobRoot,
    id: &JobId,
) -> Result<JobStatus, JobError> {
    let out = target
        .run(&CommandSpec::new(script::status(root, id)).timeout(QUICK))
        .await?;
    let text = out.stdout_text();
    let remote = RemoteStatus::parse(&text).ok_or_else(|| {
        JobError::Unreadable(
            format!("{}{}", text.trim(), out.stderr_text().trim())
                .chars()
                .take(300)
                .collect(),
        )
    })?;
    Ok(JobStatus::from_remote(id, &remote))
}

/// End the job's whole process group (and anything else in its session): TERM, `grace` to
/// exit, then KILL; report what survived. The job folder and its log stay.
#[tracing::instrument(skip(target), err, fields(target = %target.describe()))]
pub async fn cancel(
    target: &dyn Target,
    root: &JobRoot,
    id: &JobId,
    grace: Duration,
) -> Result<CancelReport, JobError> {
    let grace_secs = u32::try_from(grace.as_secs().max(1)).unwrap_or(u32::MAX);
    let out = target
        .run(&CommandSpec::new(script::cancel(root, id, grace_secs)).timeout(QUICK + grace + grace))
        .await?;
    let report = RemoteCancel::parse(&out.stdout_text());
    let status = status(target, root, id).await?;
    Ok(CancelReport {
        already_over: report.already_exited.is_some() || report.other_boot || !report.folder,
        killed: report.killed,
        left_behind: report.left,
        folder_kept: report.folder,
        status,
    })
}

/// Delete a finished job's folder on the instance. A running job is refused (cancel it first).
pub async fn remove(target: &dyn Target, root: &JobRoot, id: &JobId) -> Result<bool, JobError> {
    let out = target
        .run(&CommandSpec::new(script::remove(root, id)).timeout(QUICK))
        .await?;
    Ok(out.success())
}

/// How long `attach` keeps trying while the link is down.
#[derive(Debug, Clone, Copy)]
pub struct AttachOptions {
    /// Give up (the job goes on) after the link has been down this long without a byte.
    pub give_up_after: Duration,
    /// Pause between reconnect attempts after a failed one.
    pub retry_every: Duration,
    /// A log stream silent this long (no byte, no heartbeat) counts as a dead link: it is
    /// dropped and a fresh connection continues from the offset. Three missed heartbeats.
    pub silent_after: Duration,
}

impl Default for AttachOptions {
    fn default() -> Self {
        Self {
            give_up_after: Duration::from_secs(10 * 60),
            retry_every: Duration::from_secs(1),
            silent_after: script::HEARTBEAT_EVERY * 3 + Duration::from_millis(500),
        }
    }
}

/// What [`attach_watching`] tells of the link while it follows a job: the screens say "connection
/// lost — the job goes on" between the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkChange {
    /// The log stream broke or went silent; the job goes on and the link is being redialled.
    Lost,
    /// Bytes (or the heartbeat) arrive again.
    Back,
}

/// How a log stream ended, as `attach` sees it.
enum Streamed {
    Ended(Result<Option<u32>, TargetError>),
    /// Nothing came for `silent_after` although the stream had been heard.
    WentSilent,
}

/// A log stream's end, and whether anything (a byte or a heartbeat) came through it.
struct StreamEnd {
    how: Streamed,
    heard: bool,
}

/// Run the log stream from `*offset`, counting each stdout byte into `*offset` and handing it to
/// `sink`, and watch it: once it has been heard, a silence past `silent_after` ends it.
async fn stream_once(
    target: &dyn Target,
    root: &JobRoot,
    id: &JobId,
    offset: &mut u64,
    sink: &mut (dyn FnMut(&[u8]) + Send),
    silent_after: Duration,
    on_heard: &(dyn Fn() + Sync),
) -> StreamEnd {
    let spec = CommandSpec::new(script::stream(root, id, *offset))
        // The stream lasts as long as the job; the heartbeat watch below notices a dead link.
        .timeout(Duration::from_secs(365 * 24 * 3600));
    let base = Instant::now();
    // Milliseconds after `base` when the stream was last heard; NEVER until the first byte
    // (connecting may take long on a slow link, and must not be cut short by the watch).
    const NEVER: u64 = u64::MAX;
    let heard = AtomicU64::new(NEVER);
    let mut on_chunk = |stream: OutputStream, chunk: &[u8]| {
        if stream == OutputStream::Stdout {
            sink(chunk);
            *offset += chunk.len() as u64;
        }
        let at = u64::try_from(base.elapsed().as_millis()).unwrap_or(NEVER - 1);
        heard.store(at, Ordering::Relaxed);
        on_heard();
    };
    let run = target.run_streaming(&spec, &mut on_chunk);
    let watch = async {
        let tick = (silent_after / 4).max(Duration::from_millis(50));
        loop {
            tokio::time::sleep(tick).await;
            let last = heard.load(Ordering::Relaxed);
            if last != NEVER && base.elapsed() > Duration::from_millis(last) + silent_after {
                return;
            }
        }
    };
    let how = tokio::select! {
        ended = run => Streamed::Ended(ended),
        () = watch => Streamed::WentSilent,
    };
    StreamEnd {
        how,
        heard: heard.load(Ordering::Relaxed) != NEVER,
    }
}

/// Stream the job's log from byte `*offset` into `sink` until the job is over; returns its final
/// status. `*offset` always equals the bytes handed to `sink` so far plus where it started, also
/// when this future is dropped (Ctrl-C, window closed) — keep it, and the next attach continues
/// at exactly that byte. A dropped link is redialled (the target reconnects by itself) and the
/// stream resumes from `*offset`. A link that died without the transport noticing is found by
/// the stream's heartbeat going silent ([`AttachOptions::silent_after`]); the target is then told
/// to dial afresh at once rather than wait for TCP to give up on the old connection.
pub async fn attach(
    target: &dyn Target,
    root: &JobRoot,
    id: &JobId,
    offset: &mut u64,
    sink: &mut (dyn FnMut(&[u8]) + Send),
    options: AttachOptions,
) -> Result<JobStatus, JobError> {
    attach_watching(target, root, id, offset, sink, options, &mut |_| {}).await
}

/// [`attach`], telling `on_link` when the link is lost (the job goes on) and when it is back:
/// once each way, the first byte or heartbeat of a new stream counting as back.
pub async fn attach_watching(
    target: &dyn Target,
    root: &JobRoot,
    id: &JobId,
    offset: &mut u64,
    sink: &mut (dyn FnMut(&[u8]) + Send),
    options: AttachOptions,
    on_link: &mut (dyn FnMut(LinkChange) + Send),
) -> Result<JobStatus, JobError> {
    let on_link = std::sync::Mutex::new(on_link);
    let lost = AtomicBool::new(false);
    let tell = |state: LinkChange| {
        let changed =
            lost.swap(state == LinkChange::Lost, Ordering::Relaxed) != (state == LinkChange::Lost);
        if changed {
            if let Ok(mut on_link) = on_link.lock() {
                on_link(state);
            }
        }
    };
    let heard_again = || tell(LinkChange::Back);
    let mut down_since: Option<Instant> = None;
    loop {
        let streamed = stream_once(
            target,
            root,
            id,
            offset,
            sink,
            options.silent_after,
            &heard_again,
        )
        .await;
        if streamed.heard {
            down_since = None;
        }
        let trouble = match streamed.how {
            Streamed::Ended(Ok(Some(0) | Some(script::EXIT_NO_LOG))) => None,
            Streamed::Ended(Ok(other)) => Some(format!("the log stream ended with {other:?}")),
            Streamed::Ended(Err(err)) if link_trouble(&err) => Some(err.to_string()),
            Streamed::Ended(Err(err)) => return Err(err.into()),
            Streamed::WentSilent => {
                tell(LinkChange::Lost);
                tracing::info!(job = %id, offset = *offset, "the log stream went silent; dialling again");
                // Dial a fresh connection at once (the target paces its attempts) instead of
                // waiting for the old one's TCP retransmissions to come through.
                target.link_stalled().await;
                down_since.get_or_insert_with(Instant::now);
                continue;
            }
        };
        if trouble.is_none() {
            match status(target, root, id).await {
                Ok(now) if now.state.is_over() && now.log_bytes <= *offset => return Ok(now),
                Ok(_) => {
                    down_since = None;
                    continue;
                }
                Err(JobError::Target(err)) if link_trouble(&err) => tell(LinkChange::Lost),
                Err(err) => return Err(err),
            }
        } else {
            tell(LinkChange::Lost);
            tracing::info!(job = %id, offset = *offset, ?trouble, "log stream interrupted; resuming");
        }
        let since = *down_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= options.give_up_after {
            return Err(JobError::GaveUp {
                seconds: options.give_up_after.as_secs(),
            });
        }
        tokio::time::sleep(options.retry_every).await;
    }
}

/// Turns log chunks into text without splitting a UTF-8 character cut by a chunk boundary
/// (the UI shows text; the log itself stays bytes).
#[derive(Debug, Default)]
pub struct Utf8Chunks {
    pending: Vec<u8>,
}

impl Utf8Chunks {
    pub fn push(&mut self, chunk: &[u8]) -> String {
        self.pending.extend_from_slice(chunk);
        let keep = match std::str::from_utf8(&self.pending) {
            Ok(_) => 0,
            // An incomplete character at the end: wait for its other bytes.
            Err(err) if err.error_len().is_none() => self.pending.len() - err.valid_up_to(),
            Err(_) => 0,
        };
        let tail = self.pending.split_off(self.pending.len() - keep);
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending = tail;
        text
    }
}

/// True when the error is the link's, so trying again later can work.
fn link_trouble(err: &TargetError) -> bool {
    match err {
        TargetError::Timeout(_) | TargetError::Connection(_) => true,
        TargetError::Spawn(_) => false,
        TargetError::Transport(err) => matches!(
            crate::Coded::code(err.as_ref()),
            "ssh.refused"
                | "ssh.unreachable"
                | "ssh.connect_timeout"
                | "ssh.handshake_failed"
                | "ssh.disconnected"
                | "ssh.channel"
                | "ssh.command_timeout"
        ),
    }
}

#[cfg(test)]
mod silent_link_tests;
#[cfg(test)]
mod tests;
