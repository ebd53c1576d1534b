//! Running the probes: concurrently, each with its own timeout, reporting progress per probe,
//! and keeping partial results when some fail.
//!
//! Each probe is one exec channel (one shell) running a batched script; the stress test runs
//! alone afterwards so its GPU load cannot show up as "memory held by another process" in the
//! GPU probe.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::facts::{Facts, ProbeId, ProbeOutcome, ProbeRun};
use super::network::{self, Endpoint};
use super::sections::{self, Part, PartOutput};
use super::{
    disk, docker, gpu, kernel_log, ollama, python, resources, stress, system, torch, ProbeError,
};
use crate::shell;
use crate::target::{CommandSpec, Target, TargetError};

/// Progress of the battery, one event per probe start and finish.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "event", rename_all = "snake_case")]
#[ts(export)]
pub enum ProbeEvent {
    Started { probe: ProbeId },
    Finished { run: ProbeRun },
}

/// Where progress goes: the CLI prints it, the app forwards it to the window.
pub trait ProbeSink: Send + Sync {
    fn send(&self, event: ProbeEvent);
}

impl<F: Fn(ProbeEvent) + Send + Sync> ProbeSink for F {
    fn send(&self, event: ProbeEvent) {
        self(event);
    }
}

/// A sink that drops every event.
pub struct NoProgress;

impl ProbeSink for NoProgress {
    fn send(&self, _event: ProbeEvent) {}
}

#[derive(Debug, Clone)]
pub struct BatteryOptions {
    /// Run the matmul stress test after the other probes.
    pub stress: bool,
    /// Seconds of timed matmuls per GPU and dtype.
    pub stress_seconds: f64,
    pub skip: Vec<ProbeId>,
    /// Directories put in front of PATH in every probe (test hosts, unusual installs).
    path_prefix: Vec<String>,
    /// Extra environment for every probe, e.g. `PYTHONPATH`.
    env: Vec<(String, String)>,
    pub endpoints: Vec<Endpoint>,
    /// How many probes may run at once (OpenSSH allows 10 sessions per connection).
    pub max_concurrent: usize,
}

impl Default for BatteryOptions {
    fn default() -> Self {
        Self {
            stress: false,
            stress_seconds: 4.0,
            skip: Vec::new(),
            path_prefix: Vec::new(),
            env: Vec::new(),
            endpoints: network::default_endpoints(),
            max_concurrent: 8,
        }
    }
}

impl BatteryOptions {
    /// Prepend a directory to PATH for every probe.
    pub fn path_prefix(mut self, dir: impl Into<String>) -> Self {
        self.path_prefix.push(dir.into());
        self
    }

    /// Set an environment variable for every probe. Names must be shell identifiers.
    pub fn env(mut self, name: &str, value: impl Into<String>) -> Result<Self, ProbeError> {
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(ProbeError::BadEnvName(name.to_owned()));
        }
        self.env.push((name.to_owned(), value.into()));
        Ok(self)
    }

    fn prelude(&self) -> String {
        let mut out = String::new();
        if !self.path_prefix.is_empty() {
            let dirs: Vec<String> = self
                .path_prefix
                .iter()
                .map(|d| shell::quote(d).into_owned())
                .collect();
            out.push_str(&format!("PATH={}:\"$PATH\"; export PATH\n", dirs.join(":")));
        }
        for (name, value) in &self.env {
            out.push_str(&format!("{name}={}; export {name}\n", shell::quote(value)));
        }
        out
    }
}

/// Per-probe limits: long enough for a slow rented disk, short enough to never hang the wizard.
fn timeout(probe: ProbeId, options: &BatteryOptions) -> Duration {
    Duration::from_secs(match probe {
        ProbeId::System | ProbeId::Docker | ProbeId::Ollama | ProbeId::Python => 20,
        ProbeId::Gpu | ProbeId::Conda => 40,
        ProbeId::Network => u64::from(network::REQUEST_TIMEOUT_S) + 8,
        ProbeId::Torch => 120,
        // Eight GPUs × two dtypes × the budget, plus warm-up and start.
        ProbeId::Stress => 60 + (options.stress_seconds.max(0.0) as u64 + 3) * 16,
    })
}

fn parts(probe: ProbeId, options: &BatteryOptions) -> Vec<Part> {
    match probe {
        ProbeId::System => {
            let mut all = system::parts();
            all.extend(resources::parts());
            all.push(disk::part());
            all.push(kernel_log::part());
            all
        }
        ProbeId::Gpu => gpu::parts(),
        ProbeId::Python => python::python_parts(),
        ProbeId::Conda => python::conda_parts(),
        ProbeId::Torch => vec![torch::part()],
        ProbeId::Docker => docker::parts(),
        ProbeId::Ollama => ollama::parts(),
        ProbeId::Network => network::parts(&options.endpoints),
        ProbeId::Stress => vec![stress::part(options.stress_seconds)],
    }
}

/// Probes whose tools are set up by the login profile (conda's PATH, CUDA's PATH).
fn needs_login_shell(probe: ProbeId) -> bool {
    matches!(
        probe,
        ProbeId::Gpu
            | ProbeId::Python
            | ProbeId::Conda
            | ProbeId::Torch
            | ProbeId::Ollama
            | ProbeId::Stress
    )
}

fn command(probe: ProbeId, options: &BatteryOptions) -> CommandSpec {
    let script = format!(
        "{}{}",
        options.prelude(),
        sections::script(&parts(probe, options))
    );
    let spec = CommandSpec::new(script).timeout(timeout(probe, options));
    if needs_login_shell(probe) {
        spec.login_shell()
    } else {
        spec
    }
}

/// Fold one probe's parsed output into the facts; an error says why the output was unusable.
fn absorb(
    probe: ProbeId,
    parts: &HashMap<String, PartOutput>,
    options: &BatteryOptions,
    facts: &mut Facts,
) -> Result<(), String> {
    match probe {
        ProbeId::System => {
            facts.system = Some(system::parse(parts));
            facts.resources = Some(resources::parse(parts));
            facts.disks = Some(disk::parse(parts));
            facts.kernel_log = Some(kernel_log::parse(parts.get("dmesg")));
        }
        ProbeId::Gpu => facts.gpu = Some(gpu::parse(parts)),
        ProbeId::Python => facts.python = Some(python::parse_python(parts)),
        ProbeId::Conda => {
            facts.conda = Some(python::parse_conda(parts.get("conda")).unwrap_or_default());
        }
        ProbeId::Torch => {
            facts.torch = Some(torch::parse(parts.get("torch")).map_err(|e| e.to_string())?);
        }
        ProbeId::Docker => facts.docker = Some(docker::parse(parts)),
        ProbeId::Ollama => facts.ollama = Some(ollama::parse(parts)),
        ProbeId::Network => facts.network = Some(network::parse(parts, &options.endpoints)),
        ProbeId::Stress => {
            facts.stress = Some(stress::parse(parts.get("stress")).map_err(|e| e.to_string())?);
        }
    }
    Ok(())
}

struct Attempt {
    probe: ProbeId,
    result: Result<HashMap<String, PartOutput>, TargetError>,
    elapsed: Duration,
    stderr: String,
}

async fn attempt(
    target: &dyn Target,
    probe: ProbeId,
    options: &BatteryOptions,
    sink: &dyn ProbeSink,
) -> Attempt {
    sink.send(ProbeEvent::Started { probe });
    let started = Instant::now();
    let spec = command(probe, options);
    let result = target.run(&spec).await;
    let stderr = result.as_ref().map(|o| o.stderr_text()).unwrap_or_default();
    Attempt {
        probe,
        result: result.map(|out| sections::split(&out.stdout_text())),
        elapsed: started.elapsed(),
        stderr,
    }
}

fn settle(
    attempt: Attempt,
    options: &BatteryOptions,
    facts: &mut Facts,
    sink: &dyn ProbeSink,
) -> Option<TargetError> {
    let duration_ms = u64::try_from(attempt.elapsed.as_millis()).unwrap_or(u64::MAX);
    let (outcome, message, connection_error) = match attempt.result {
        Ok(parts) => match absorb(attempt.probe, &parts, options, facts) {
            Ok(()) => (ProbeOutcome::Ok, None, None),
            Err(why) => {
                let tail: String = attempt
                    .stderr
                    .lines()
                    .rev()
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" | ");
                // The instance's own words are stored with the run: no URL credentials.
                let message = if tail.is_empty() {
                    why
                } else {
                    format!("{why} ({})", crate::redact::redact_urls(&tail))
                };
                (ProbeOutcome::Failed, Some(message), None)
            }
        },
        Err(TargetError::Timeout(limit)) => (
            ProbeOutcome::TimedOut,
            Some(format!("no answer within {} s", limit.as_secs())),
            None,
        ),
        Err(err) => {
            let lost_connection = err.is_connection_failure();
            let message = Some(err.to_string());
            (
                ProbeOutcome::Failed,
                message,
                lost_connection.then_some(err),
            )
        }
    };
    let run = ProbeRun {
        probe: attempt.probe,
        outcome,
        duration_ms,
        message,
    };
    sink.send(ProbeEvent::Finished { run: run.clone() });
    facts.probes.push(run);
    connection_error
}

/// Run every probe not skipped on `target`. Fails only when the target could not be reached at
/// all; any other failure is recorded per probe in [`Facts::probes`].
pub async fn run_battery(
    target: &dyn Target,
    options: &BatteryOptions,
    sink: &dyn ProbeSink,
    now: DateTime<Utc>,
) -> Result<Facts, ProbeError> {
    let mut facts = Facts::empty(target.describe(), now);
    let wanted =
        |p: &ProbeId| !options.skip.contains(p) && (*p != ProbeId::Stress || options.stress);
    for probe in ProbeId::ALL.into_iter().filter(|p| !wanted(p)) {
        let run = ProbeRun {
            probe,
            outcome: ProbeOutcome::Skipped,
            duration_ms: 0,
            message: None,
        };
        sink.send(ProbeEvent::Finished { run: run.clone() });
        facts.probes.push(run);
    }
    let first_wave: Vec<ProbeId> = ProbeId::ALL
        .into_iter()
        .filter(|p| wanted(p) && *p != ProbeId::Stress)
        .collect();
    // By value, not `.iter()`: a closure over `&ProbeId` makes the whole battery future
    // impossible for rustc to prove `Send` (higher-ranked lifetime), which the app's async
    // commands require.
    let mut attempts = futures::stream::iter(
        first_wave
            .into_iter()
            .map(|p| attempt(target, p, options, sink)),
    )
    .buffer_unordered(options.max_concurrent.max(1));
    let mut tried = 0usize;
    let mut connection_errors = Vec::new();
    while let Some(done) = attempts.next().await {
        tried += 1;
        if let Some(err) = settle(done, options, &mut facts, sink) {
            connection_errors.push(err);
        }
    }
    drop(attempts);
    if tried > 0 && connection_errors.len() == tried {
        let first = connection_errors
            .into_iter()
            .next()
            .map(|e| e.to_string())
            .unwrap_or_default();
        return Err(ProbeError::Unreachable(first));
    }
    if wanted(&ProbeId::Stress) {
        let done = attempt(target, ProbeId::Stress, options, sink).await;
        settle(done, options, &mut facts, sink);
    }
    facts
        .probes
        .sort_by_key(|run| ProbeId::ALL.iter().position(|p| *p == run.probe));
    Ok(facts)
}
