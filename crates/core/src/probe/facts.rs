//! Everything the battery learned about one machine, in one serialisable value.
//!
//! A `None` section means the probe did not run or failed; `probes` says which and why, so
//! rules never mistake "unknown" for "absent".

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::disk::DiskUsage;
use super::docker::DockerFacts;
use super::gpu::GpuFacts;
use super::kernel_log::KernelLogFacts;
use super::network::NetworkFacts;
use super::ollama::OllamaFacts;
use super::python::{CondaFacts, PythonFacts};
use super::resources::ResourceFacts;
use super::stress::StressFacts;
use super::system::SystemFacts;
use super::torch::TorchFacts;

/// One probe of the battery (one exec channel on the target).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ProbeId {
    /// OS, kernel, container/VM, hostname, CPU, memory, cgroup limits, disks, kernel log.
    System,
    /// nvidia-smi, kernel module, device nodes, GPU processes.
    Gpu,
    Python,
    Conda,
    Torch,
    Docker,
    Ollama,
    Network,
    Stress,
}

impl ProbeId {
    pub const ALL: [ProbeId; 9] = [
        ProbeId::System,
        ProbeId::Gpu,
        ProbeId::Python,
        ProbeId::Conda,
        ProbeId::Torch,
        ProbeId::Docker,
        ProbeId::Ollama,
        ProbeId::Network,
        ProbeId::Stress,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ProbeId::System => "system",
            ProbeId::Gpu => "gpu",
            ProbeId::Python => "python",
            ProbeId::Conda => "conda",
            ProbeId::Torch => "torch",
            ProbeId::Docker => "docker",
            ProbeId::Ollama => "ollama",
            ProbeId::Network => "network",
            ProbeId::Stress => "stress",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == text)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ProbeOutcome {
    Ok,
    Failed,
    TimedOut,
    Skipped,
}

/// How one probe went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ProbeRun {
    pub probe: ProbeId,
    pub outcome: ProbeOutcome,
    #[ts(type = "number")]
    pub duration_ms: u64,
    /// Why it failed, when it did.
    pub message: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Facts {
    /// `root@region-1.autodl.com:12345` or `this computer`.
    pub target: String,
    pub collected_at: DateTime<Utc>,
    pub system: Option<SystemFacts>,
    pub resources: Option<ResourceFacts>,
    pub disks: Option<Vec<DiskUsage>>,
    pub kernel_log: Option<KernelLogFacts>,
    pub gpu: Option<GpuFacts>,
    pub python: Option<PythonFacts>,
    /// `Some` with no `path` when the probe ran and found no conda.
    pub conda: Option<CondaFacts>,
    pub torch: Option<TorchFacts>,
    pub docker: Option<DockerFacts>,
    pub ollama: Option<OllamaFacts>,
    pub network: Option<NetworkFacts>,
    pub stress: Option<StressFacts>,
    pub probes: Vec<ProbeRun>,
}

impl Facts {
    pub fn empty(target: impl Into<String>, collected_at: DateTime<Utc>) -> Self {
        Self {
            target: target.into(),
            collected_at,
            system: None,
            resources: None,
            disks: None,
            kernel_log: None,
            gpu: None,
            python: None,
            conda: None,
            torch: None,
            docker: None,
            ollama: None,
            network: None,
            stress: None,
            probes: Vec::new(),
        }
    }

    pub fn in_container(&self) -> bool {
        self.system.as_ref().is_some_and(|s| s.container.is_some())
    }
}
