//! Where commands run: the rented instance over SSH, or this computer.
//!
//! Probes and install recipes are written once against [`Target`]; `LocalTarget` runs them here
//! (for `verify --local` and tests), `SshTarget` (in `crate::ssh`) runs them on the instance.

mod collect;
mod error;
mod local;
mod stream;

use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;

pub use collect::{truncation_marker, OutputCollector, DEFAULT_OUTPUT_CAP};
pub use error::{TargetError, TransportError};
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
    /// Most bytes of each output stream kept when the output is collected (see
    /// [`OutputCollector`]); streaming callers see everything.
    pub output_cap: usize,
}

impl CommandSpec {
    pub fn new(script: impl Into<String>) -> Self {
        Self {
            script: script.into(),
            login_shell: false,
            timeout: Duration::from_secs(30),
            output_cap: DEFAULT_OUTPUT_CAP,
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

    pub fn output_cap(mut self, bytes: usize) -> Self {
        self.output_cap = bytes;
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

    /// A caller saw its command go silent past its own heartbeat (see `job::attach`): the link
    /// is most likely dead although the transport has not noticed yet. A target with a
    /// connection stops handing it out, so the next command dials a fresh one instead of
    /// waiting out TCP's retransmission back-off. Others ignore it.
    fn link_stalled(&self) -> BoxFuture<'_, ()> {
        async {}.boxed()
    }
}
