//! How the sampler runs: the interval, how often processes are listed, the restart back-off, and
//! what the streams' shell starts with (a PATH first, variables). Apart from `mod.rs` so the
//! stream that reads them does not import the module that starts it.

use std::time::Duration;

use super::error::MonitorError;
use crate::shell;

/// Shortest sampling interval: nvidia-smi's own loop gets unreliable below this, and nothing a
/// person watches needs it.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);
/// One sample a second (gpustat's default; nvitop uses 2 s).
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// How the sampler runs.
#[derive(Debug, Clone)]
pub struct SamplerOptions {
    pub interval: Duration,
    /// How often the compute processes are listed.
    pub processes_every: Duration,
    /// Longest wait between restarts of a failing stream.
    pub max_backoff: Duration,
    path_prefix: Vec<String>,
    env: Vec<(String, String)>,
}

impl SamplerOptions {
    pub fn new(interval: Duration) -> Result<Self, MonitorError> {
        if interval < MIN_INTERVAL {
            return Err(MonitorError::IntervalTooShort {
                min: MIN_INTERVAL,
                got: interval,
            });
        }
        Ok(Self {
            interval,
            processes_every: Duration::from_secs(5),
            max_backoff: Duration::from_secs(15),
            path_prefix: Vec::new(),
            env: Vec::new(),
        })
    }

    /// A stream silent for this long is stalled and started again.
    pub fn stall_after(&self) -> Duration {
        (self.interval * 3).max(Duration::from_secs(3))
    }

    /// Put a directory first on the instance's PATH (tests: the fake `nvidia-smi`).
    pub fn path_prefix(mut self, dir: impl Into<String>) -> Self {
        self.path_prefix.push(dir.into());
        self
    }

    /// Set an environment variable for the streams; `None` when `name` is not a shell name.
    pub fn env(mut self, name: &str, value: impl Into<String>) -> Option<Self> {
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        valid.then(|| {
            self.env.push((name.to_owned(), value.into()));
            self
        })
    }

    pub(super) fn prelude(&self) -> String {
        let mut out = String::new();
        if !self.path_prefix.is_empty() {
            let dirs: Vec<String> = self
                .path_prefix
                .iter()
                .map(|d| shell::quote(d).into_owned())
                .collect();
            out.push_str(&format!("PATH={}:\"$PATH\"; export PATH; ", dirs.join(":")));
        }
        for (name, value) in &self.env {
            out.push_str(&format!("{name}={}; export {name}; ", shell::quote(value)));
        }
        out
    }
}
