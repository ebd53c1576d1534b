//! Where commands run: the rented instance over SSH, or this computer.
//!
//! Probes and install recipes are written once against [`Target`]; `LocalTarget` runs them here
//! (for `verify --local` and tests), `SshTarget` (in `crate::ssh`) runs them on the instance.

mod local;
mod stream;

use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;

pub use local::LocalTarget;
pub use stream::{LineSplitter, OutputStream};

/// One shell command to run on a target. `script` is shell text whose every user-supplied value
/// was quoted with [`crate::shell::quote`].
#[derive(Debug, Clone)]
pub struct CommandSpec {
    pub script: String,
    /// Run through `bash -lc` so the login profile sets PATH (conda on AutoDL-style images).
    pub login_shell: bool,
    pub timeout: Duration,
}

impl CommandSpec {
    pub fn new(script: impl Into<String>) -> Self {
        Self {
            script: script.into(),
            login_shell: false,
            timeout: Duration::from_secs(30),
        }
    }

    pub fn login_shell(mut self) -> Self {
        self.login_shell = true;
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// What a finished command left behind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandOutput {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// `None` when the command was killed by a signal or the exit status never arrived.
    pub exit_status: Option<u32>,
}

impl CommandOutput {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    pub fn success(&self) -> bool {
        self.exit_status == Some(0)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("the command did not finish within {0:?}")]
    Timeout(Duration),
    #[error("could not start the command: {0}")]
    Spawn(String),
    #[error("the connection to the instance failed: {0}")]
    Connection(String),
    /// An SSH failure keeps its own code (`ssh.host_key_changed`, `ssh.auth_failed`, …) so the UI
    /// can still say exactly what went wrong when a probe or recipe ran through [`Target`].
    #[error(transparent)]
    Ssh(#[from] Box<crate::ssh::SshError>),
}

impl crate::Coded for TargetError {
    fn code(&self) -> &'static str {
        match self {
            Self::Timeout(_) => "target.timeout",
            Self::Spawn(_) => "target.spawn_failed",
            Self::Connection(_) => "target.connection_failed",
            Self::Ssh(err) => crate::Coded::code(err.as_ref()),
        }
    }
}

/// A place that runs shell commands. Object-safe so callers can hold `Arc<dyn Target>`.
pub trait Target: Send + Sync {
    /// Run one command to completion (or its timeout) and collect its output.
    fn run<'a>(
        &'a self,
        spec: &'a CommandSpec,
    ) -> BoxFuture<'a, Result<CommandOutput, TargetError>>;

    /// Run one command and hand its output to `sink` as it arrives (chunks in arrival order, never
    /// held in memory here), returning the exit status. For output too large to collect, or for
    /// progress shown line by line (wrap the sink in a [`LineSplitter`]).
    fn run_streaming<'a>(
        &'a self,
        spec: &'a CommandSpec,
        sink: &'a mut (dyn FnMut(OutputStream, &[u8]) + Send),
    ) -> BoxFuture<'a, Result<Option<u32>, TargetError>>;

    /// Run several commands at once and collect each one's output, in the order given. A target
    /// may run them in fewer processes or channels than commands (SSH batches what exceeds its
    /// channel limit); each result is still that command's own.
    fn run_many<'a>(
        &'a self,
        specs: &'a [CommandSpec],
    ) -> BoxFuture<'a, Vec<Result<CommandOutput, TargetError>>> {
        futures::future::join_all(specs.iter().map(|spec| self.run(spec))).boxed()
    }

    /// Human-readable name of the target, e.g. `root@region-1.autodl.com:12345` or `this computer`.
    fn describe(&self) -> String;
}
