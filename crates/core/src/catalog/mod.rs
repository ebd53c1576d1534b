//! Choose GPU: what renters need to know before they rent.
//!
//! - [`gpus`]: the GPU catalog with sourced specs, looked up by the name nvidia-smi prints.
//! - [`cuda`]: which CUDA a driver runs; [`torch_wheel`]: which PyTorch wheel fits a driver
//!   and a GPU.
//! - [`estimate`]: how much GPU memory a task needs, part by part, with formulas.
//! - [`recommend`]: which GPUs (and how many) fit, cheapest plan first when prices are known.
//! - [`local`]: this computer's own NVIDIA GPUs (NVML), so renting may not be needed.
//!
//! All data is embedded (`data/*.toml`, one entry per GPU, each number with its source;
//! unknown stays empty).

pub mod cuda;
pub mod estimate;
pub mod gpus;
pub mod local;
pub mod models;
mod naming;
pub mod recommend;
pub mod sourced;
pub mod torch_wheel;
pub mod version;

use crate::Coded;

pub use cuda::{cuda_families_for_driver, max_cuda_for_driver};
pub use estimate::{estimate, estimate_on, Estimate, EstimateRequest, Optimizer, Precision, Task};
pub use gpus::{catalog_listing, find_gpu, find_gpu_with_memory, gpus, CatalogListing, GpuSpec};
pub use local::{check_local_gpus, detect_local_gpus, local_gpu_report, LocalGpuReport};
pub use models::{find_model, model_presets, ModelShape};
pub use recommend::{
    earlier_prices, merge_prices, prices_from_rentals, recommend, PriceEntry, PriceOrigin,
    RecommendRequest, Recommendation,
};
pub use torch_wheel::{choose_torch_wheel, TorchWheelChoice, TorchWheelRequest};
pub use version::{DriverVersion, MajorMinor};

/// Everything the catalog can refuse.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("{0:?} is not a driver version like 535.104.05")]
    BadDriverVersion(String),
    #[error("{0:?} is not a compute capability like 8.9 or 12.0")]
    BadComputeCapability(String),
    #[error("unknown model preset {0:?}; run `leasehold estimate --help` for the presets, or give --params")]
    UnknownModel(String),
    #[error("unknown GPU {0:?}; `leasehold gpus` lists the catalog")]
    UnknownGpu(String),
    #[error("{0}")]
    InvalidInput(String),
}

impl Coded for CatalogError {
    fn code(&self) -> &'static str {
        match self {
            CatalogError::BadDriverVersion(_) => "catalog.bad_driver_version",
            CatalogError::BadComputeCapability(_) => "catalog.bad_compute_capability",
            CatalogError::UnknownModel(_) => "catalog.unknown_model",
            CatalogError::UnknownGpu(_) => "catalog.unknown_gpu",
            CatalogError::InvalidInput(_) => "catalog.invalid_input",
        }
    }

    fn is_bad_input(&self) -> bool {
        // Every refusal here is about what the caller passed.
        true
    }
}

#[cfg(test)]
mod data_tests;
