//! The probe battery: what is true on the rented machine, as typed facts.
//!
//! Each probe is a shell command (built with [`crate::shell`]) plus a pure parser from its
//! output to facts, so every parser is tested on captured text without a machine. The battery
//! runs the probes concurrently on any [`crate::target::Target`] and keeps what succeeded when
//! some fail. Judging the facts is [`crate::diagnose`]'s job, not this module's.

pub mod nvidia_smi;

mod battery;
pub mod disk;
pub mod docker;
mod facts;
pub mod gpu;
pub mod kernel_log;
pub mod network;
pub mod ollama;
pub mod python;
pub mod resources;
pub mod sections;
pub mod stress;
pub mod system;
pub mod torch;

pub use battery::{run_battery, BatteryOptions, NoProgress, ProbeEvent, ProbeSink};
pub use facts::{Facts, ProbeId, ProbeOutcome, ProbeRun};

/// Why the battery as a whole could not run.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("`{0}` is not a valid environment variable name")]
    BadEnvName(String),
    #[error("could not reach the machine: {0}")]
    Unreachable(String),
}

impl crate::Coded for ProbeError {
    fn code(&self) -> &'static str {
        match self {
            Self::BadEnvName(_) => "probe.bad_env_name",
            Self::Unreachable(_) => "probe.unreachable",
        }
    }

    fn is_bad_input(&self) -> bool {
        matches!(self, Self::BadEnvName(_))
    }
}
