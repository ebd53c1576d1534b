//! The watchdog on the instance: a standalone script that powers a forgotten rental off when the
//! laptop is closed and nobody is looking — after the GPUs, CPU, disk, network and interactive
//! SSH logins have all stayed quiet for the idle time (after a grace period), or after a maximum
//! runtime whatever happens.
//!
//! Why on the instance: the app's own reminders (`remind`) need the app running; the watchdog
//! needs nothing but bash and coreutils there (no Python: AutoDL-style images differ in which
//! Python they have, and a broken conda must not break the guard). Why these rules: a signal
//! that cannot be read counts as busy, so an unknown never powers off a working machine.
//!
//! - [`options`]: the settings (CLI flags and the card's form, same strings) and their checks.
//! - [`script`]: the generator (pure): quoted settings + the fixed body in `watchdog.sh`.
//! - [`remote`]: the install, status and remove commands (pure) and their parsers.
//!
//! This file runs them over any [`Target`].
//!
//! The signals: GPU through nvidia-smi, CPU from cgroup v2/v1 or `/proc/stat`, disk IO, network
//! bytes, and interactive `sshd: user@pts` logins. The install uses setsid + nohup and keeps one
//! copy per folder. For restarts it adds a systemd unit, an `@reboot` crontab line or an
//! `/etc/profile.d` hook, whichever the image allows, or none. Status reads the state, the settings
//! and the newest decisions from its bounded log. Removal deletes only its own files and hooks.

mod error;
mod kept;
pub mod options;
mod remote;
pub mod script;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::target::{CommandSpec, Target};

pub use error::WatchdogError;
pub use kept::status_kept;
pub use options::{Signal, WatchdogOptions, WatchdogRequest, DEFAULT_STATE_DIR};
pub use remote::{BootHook, LogLine};
pub use script::script;

/// Commands that only write small files; a slow answer means a bad link.
const QUICK: Duration = Duration::from_secs(30);
/// Decisions shown by the status.
const LOG_LINES: u32 = 30;

/// What `install` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct InstallReport {
    pub pid: u32,
    /// The folder on the instance, as the instance resolved it.
    pub state_dir: String,
    pub boot: BootHook,
    /// `boot` in one plain sentence (English; the UI words it from `boot`).
    pub boot_note: String,
    pub options: WatchdogOptions,
}

/// The watchdog as the instance reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct WatchdogStatus {
    pub installed: bool,
    pub running: bool,
    pub pid: Option<u32>,
    pub state_dir: Option<String>,
    pub boot: BootHook,
    /// The restart hook recorded at install is still there.
    pub boot_in_place: bool,
    /// `grace`, `watching`, `idle`, `powering_off` or `powered_off` at the latest sample.
    pub phase: Option<String>,
    /// Seconds every signal has been quiet, at the latest sample.
    #[ts(type = "number | null")]
    pub idle_seconds: Option<u64>,
    /// The busy (or unreadable) signals at the latest sample.
    pub busy: Vec<String>,
    /// Every value of the latest sample, e.g. `gpu=0% cpu=1% io=0KiB/s net=0KiB/s ssh=0`.
    pub sample: Option<String>,
    /// The signals the latest sample could not read (`net=unreadable`): each counts as busy, so
    /// while one is listed the watchdog never powers the instance off — it is not protecting.
    pub unreadable: Vec<String>,
    pub updated: Option<String>,
    /// The settings the running copy started with, as it wrote them.
    pub settings: BTreeMap<String, String>,
    /// The newest decisions, oldest first.
    pub log: Vec<LogLine>,
}

/// What `remove` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RemoveReport {
    pub was_running: bool,
    pub hooks_removed: Vec<BootHook>,
    pub folder_removed: bool,
}

/// Install (or replace) the watchdog with `options` and start it detached.
#[tracing::instrument(skip(target), err, fields(target = %target.describe()))]
pub async fn install(
    target: &dyn Target,
    options: &WatchdogOptions,
) -> Result<InstallReport, WatchdogError> {
    options.validate()?;
    let command = remote::install(&options.state_dir, &script(options));
    let out = target
        .run(&CommandSpec::new(command).timeout(QUICK))
        .await?;
    let (values, _) = remote::key_values(&out.stdout_text());
    let pid = values.get("pid").and_then(|p| p.trim().parse::<u32>().ok());
    match (out.exit_status, pid) {
        (Some(0), Some(pid)) => {
            let boot = remote::boot_hook(values.get("boot"));
            Ok(InstallReport {
                pid,
                state_dir: values.get("dir").cloned().unwrap_or_default(),
                boot,
                boot_note: boot.explain().to_owned(),
                options: options.clone(),
            })
        }
        (Some(remote::EXIT_NO_SETSID), _) => Err(WatchdogError::NoSetsid),
        _ => Err(WatchdogError::NotStarted(
            format!("{} {}", out.stderr_text().trim(), out.stdout_text().trim())
                .trim()
                .chars()
                .take(500)
                .collect(),
        )),
    }
}

/// Read the watchdog's state, settings and newest decisions from the instance.
#[tracing::instrument(skip(target), err, fields(target = %target.describe()))]
pub async fn status(target: &dyn Target, state_dir: &str) -> Result<WatchdogStatus, WatchdogError> {
    check_dir(state_dir)?;
    let out = target
        .run(&CommandSpec::new(remote::status(state_dir, LOG_LINES)).timeout(QUICK))
        .await?;
    let text = out.stdout_text();
    let remote = remote::RemoteStatus::parse(&text).ok_or_else(|| {
        WatchdogError::Unreadable(
            format!("{}{}", text.trim(), out.stderr_text().trim())
                .chars()
                .take(300)
                .collect(),
        )
    })?;
    let flag = |key: &str| remote.head.get(key).is_some_and(|v| v.trim() == "1");
    let running = flag("running");
    Ok(WatchdogStatus {
        installed: flag("installed"),
        running,
        pid: running
            .then(|| remote.head.get("pid").and_then(|p| p.trim().parse().ok()))
            .flatten(),
        state_dir: remote.head.get("dir").cloned(),
        boot: remote::boot_hook(remote.head.get("boot")),
        boot_in_place: flag("boot_in_place"),
        phase: remote.state.get("phase").cloned(),
        idle_seconds: remote
            .state
            .get("idle_s")
            .and_then(|v| v.trim().parse().ok()),
        busy: remote
            .state
            .get("busy")
            .map(|b| {
                b.split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        unreadable: unreadable_signals(remote.state.get("sample").map(String::as_str)),
        sample: remote.state.get("sample").cloned(),
        updated: remote.state.get("updated").cloned(),
        settings: remote.settings,
        log: remote.log,
    })
}

/// Stop the watchdog and take everything it put on the instance away.
#[tracing::instrument(skip(target), err, fields(target = %target.describe()))]
pub async fn remove(target: &dyn Target, state_dir: &str) -> Result<RemoveReport, WatchdogError> {
    check_dir(state_dir)?;
    let out = target
        .run(&CommandSpec::new(remote::remove(state_dir)).timeout(QUICK))
        .await?;
    if !out.success() {
        return Err(WatchdogError::Unreadable(
            out.stderr_text().trim().chars().take(300).collect(),
        ));
    }
    let (values, hooks) = remote::key_values(&out.stdout_text());
    Ok(RemoveReport {
        was_running: values.get("was_running").is_some_and(|v| v.trim() == "1"),
        hooks_removed: hooks
            .iter()
            .map(|h| remote::boot_hook(Some(h)))
            .filter(|h| *h != BootHook::None)
            .collect(),
        folder_removed: values
            .get("folder_removed")
            .is_some_and(|v| v.trim() == "1"),
    })
}

/// The signals a sample line names as unreadable (`gpu=0% net=unreadable` → `net`).
pub fn unreadable_signals(sample: Option<&str>) -> Vec<String> {
    sample
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|word| word.split_once('='))
        .filter(|(_, value)| *value == "unreadable")
        .map(|(signal, _)| signal.to_owned())
        .collect()
}

/// The state folder alone, checked like the full settings (status and remove take only it).
fn check_dir(state_dir: &str) -> Result<(), WatchdogError> {
    WatchdogOptions {
        state_dir: state_dir.to_owned(),
        ..WatchdogOptions::default()
    }
    .validate()
}

#[cfg(test)]
mod tests;
