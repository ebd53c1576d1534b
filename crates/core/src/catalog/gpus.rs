//! The GPU catalog: specs of the cards renters meet, each number with its source
//! (`data/gpus.toml`), and the lookup by the name nvidia-smi prints.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::naming::{match_rank, NameKey};
use super::sourced::Sourced;
use super::version::{DriverVersion, MajorMinor};

/// Consumer cards are what people learn on; datacenter cards are what production runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum GpuClass {
    Consumer,
    Workstation,
    Datacenter,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum InterconnectKind {
    Pcie,
    Nvlink,
}

/// How this card talks to its neighbours in a multi-GPU machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Interconnect {
    #[serde(rename(deserialize = "value"))]
    pub kind: InterconnectKind,
    pub generation: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub bandwidth_gb_s: Option<f64>,
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub note: Option<String>,
}

/// One GPU model. Every `Option` is `None` when no source was found for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct GpuSpec {
    pub id: String,
    /// The name current nvidia-smi prints.
    pub name: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    pub architecture: String,
    pub class: GpuClass,
    /// `major.minor`, e.g. "8.9".
    pub compute_capability: Option<Sourced<String>>,
    /// Marketed memory size in GB.
    pub memory_gb: Option<Sourced<f64>>,
    /// memory.total as nvidia-smi reports it.
    pub memory_mib: Option<Sourced<u32>>,
    pub memory_bandwidth_gb_s: Option<Sourced<f64>>,
    /// Peak dense FP16/BF16 tensor TFLOPS (FP32 accumulate on GeForce cards).
    pub fp16_tensor_tflops: Option<Sourced<f64>>,
    pub tdp_w: Option<Sourced<f64>>,
    pub interconnect: Option<Interconnect>,
    /// The first driver branch that drives this card, where sourced.
    pub min_driver: Option<Sourced<String>>,
    pub notes: Option<String>,
}

impl GpuSpec {
    pub fn compute_capability(&self) -> Option<MajorMinor> {
        self.compute_capability
            .as_ref()
            .and_then(|cc| MajorMinor::parse(&cc.value))
    }

    pub fn min_driver(&self) -> Option<DriverVersion> {
        self.min_driver.as_ref().and_then(|d| d.value.parse().ok())
    }

    /// Memory a program can use, in GiB: nvidia-smi's total where captured, else the marketed
    /// size. GPU vendors' "GB" are binary in practice (an A100 80GB reports 81920 MiB).
    pub fn usable_gib(&self) -> Option<f64> {
        if let Some(mib) = &self.memory_mib {
            return Some(f64::from(mib.value) / 1024.0);
        }
        self.memory_gb.as_ref().map(|gb| gb.value)
    }

    pub fn has_nvlink(&self) -> bool {
        self.interconnect
            .as_ref()
            .is_some_and(|link| link.kind == InterconnectKind::Nvlink)
    }

    pub fn is_blackwell(&self) -> bool {
        self.compute_capability()
            .is_some_and(|cc| cc.major == 10 || cc.major == 12)
    }

    fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name.as_str()).chain(self.aliases.iter().map(String::as_str))
    }
}

#[derive(Deserialize)]
struct GpuFile {
    gpu: Vec<GpuSpec>,
}

static GPUS: LazyLock<Vec<GpuSpec>> = LazyLock::new(|| {
    toml::from_str::<GpuFile>(include_str!("data/gpus.toml"))
        .expect("embedded gpus.toml is valid; see catalog tests")
        .gpu
});

/// Every GPU in the catalog, in catalog order.
pub fn gpus() -> &'static [GpuSpec] {
    &GPUS
}

/// The catalog entry for a GPU name as nvidia-smi prints it (or as a user types it).
///
/// Tolerates the "NVIDIA "/"GeForce"/"Tesla" prefixes, case, punctuation, memory suffixes and
/// names cut short with "...". When several boards share a truncated or short name (e.g.
/// "Tesla V100-PCIE..."), the first in catalog order wins; pass the memory to
/// [`find_gpu_with_memory`] to pick the right one.
pub fn find_gpu(name: &str) -> Option<&'static GpuSpec> {
    find_gpu_with_memory(name, None)
}

/// Like [`find_gpu`], but among equally good matches prefers the board whose memory is
/// closest to `memory_mib` (nvidia-smi's memory.total).
pub fn find_gpu_with_memory(name: &str, memory_mib: Option<u64>) -> Option<&'static GpuSpec> {
    let key = NameKey::new(name);
    let mut best: Option<(u32, f64, &'static GpuSpec)> = None;
    for gpu in gpus() {
        let Some(rank) = gpu
            .names()
            .filter_map(|candidate| match_rank(&key, &NameKey::new(candidate)))
            .min()
        else {
            continue;
        };
        let memory_gap = match (memory_mib, gpu.usable_gib()) {
            (Some(mib), Some(gib)) => (mib as f64 / 1024.0 - gib).abs(),
            _ => 0.0,
        };
        let better = match best {
            None => true,
            Some((best_rank, best_gap, _)) => {
                rank < best_rank || (rank == best_rank && memory_gap < best_gap)
            }
        };
        if better {
            best = Some((rank, memory_gap, gpu));
        }
    }
    best.map(|(_, _, gpu)| gpu)
}

/// The whole catalog with the sources its numbers cite, as the UI and `leasehold gpus` show it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct CatalogListing {
    pub gpus: Vec<GpuSpec>,
    pub sources: std::collections::BTreeMap<String, super::sourced::Source>,
}

pub fn catalog_listing() -> CatalogListing {
    CatalogListing {
        gpus: gpus().to_vec(),
        sources: super::sourced::sources().clone(),
    }
}

/// A catalog entry by its stable id (`rtx-4090`).
pub fn gpu_by_id(id: &str) -> Option<&'static GpuSpec> {
    gpus().iter().find(|gpu| gpu.id == id)
}
