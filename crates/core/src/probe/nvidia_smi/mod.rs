//! `nvidia-smi` in every form it takes on rented machines, read into one typed report.
//!
//! The tool prints a plain table (two layouts: drivers up to 525 and 530 onwards, plus the 610
//! `KMD Version` header), CSV from `--query-gpu` / `--query-compute-apps` (with or without a
//! header and units), XML from `-q -x`, and a handful of one-line failures ("couldn't
//! communicate with the NVIDIA driver", "No devices were found", …). [`parse`] accepts any of
//! them, so the battery, the CLI's `parse nvidia-smi` and tests share one reader. Parsing never
//! panics: unknown text becomes [`NvidiaSmiStatus::Unrecognized`].

mod classify;
mod contract;
mod csv;
mod table;
mod value;
mod xml;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

pub use classify::classify_failure;
pub use contract::{ContractGpu, ContractProcess, ContractReport};
pub use csv::{parse_compute_apps_csv, parse_query_gpu_csv};
pub use table::parse_table;
pub use xml::parse_xml;

/// What nvidia-smi's output says about the driver as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum NvidiaSmiStatus {
    Ok,
    /// The command does not exist (no driver userspace, or not on PATH).
    NotInstalled,
    /// nvidia-smi exists but cannot talk to the kernel module.
    DriverNotLoaded,
    /// The driver is loaded but sees no GPU (often a kernel/driver mismatch or a GPU the driver
    /// is too old for).
    NoDevices,
    /// The kernel module and the user-space library are different versions.
    DriverMismatch,
    Unrecognized,
}

/// Whether a GPU answered every query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS, Default)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum GpuState {
    #[default]
    Ok,
    /// Some field read `ERR!` / `[Unknown Error]`, or the GPU's handle could not be opened.
    Error,
}

/// One GPU as nvidia-smi reported it. Absent readings are `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS, Default)]
#[ts(export)]
pub struct GpuInfo {
    pub index: u32,
    pub name: Option<String>,
    /// The table cuts long names to `Tesla V100-PCIE...`.
    pub name_truncated: bool,
    pub uuid: Option<String>,
    pub bus_id: Option<String>,
    pub memory_total_mib: Option<u32>,
    pub memory_used_mib: Option<u32>,
    pub utilization_pct: Option<u32>,
    pub temperature_c: Option<i32>,
    pub power_draw_w: Option<f64>,
    pub power_limit_w: Option<f64>,
    /// `8.9`, as `--query-gpu=compute_cap` prints it.
    pub compute_cap: Option<String>,
    pub pcie_gen_current: Option<u32>,
    pub pcie_gen_max: Option<u32>,
    pub pcie_width_current: Option<u32>,
    pub pcie_width_max: Option<u32>,
    pub clock_sm_mhz: Option<u32>,
    pub clock_sm_max_mhz: Option<u32>,
    pub clock_mem_mhz: Option<u32>,
    pub pstate: Option<String>,
    #[ts(type = "number | null")]
    pub ecc_uncorrected_volatile: Option<u64>,
    #[ts(type = "number | null")]
    pub ecc_corrected_volatile: Option<u64>,
    pub mig_enabled: Option<bool>,
    pub state: GpuState,
    /// The fields that read as failures, for the evidence of a finding.
    pub failed_fields: Vec<String>,
}

/// A process holding GPU memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct GpuProcess {
    /// `None` when only the GPU's UUID or bus id is known and no GPU list maps it.
    pub gpu_index: Option<u32>,
    pub gpu_uuid: Option<String>,
    pub gpu_bus_id: Option<String>,
    pub pid: u32,
    pub name: String,
    /// `C` (compute), `G` (graphics), `C+G`; absent in the CSV forms.
    pub kind: Option<String>,
    pub used_memory_mib: Option<u32>,
}

/// One MIG slice from the table's "MIG devices" block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct MigDevice {
    pub gpu_index: u32,
    pub gpu_instance: Option<u32>,
    pub compute_instance: Option<u32>,
    pub mig_index: Option<u32>,
    pub memory_used_mib: Option<u32>,
    pub memory_total_mib: Option<u32>,
}

/// Everything one nvidia-smi output said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct NvidiaSmiReport {
    pub status: NvidiaSmiStatus,
    pub driver_version: Option<String>,
    /// The highest CUDA version the driver supports (the header's `CUDA Version`).
    pub cuda_version: Option<String>,
    pub gpus: Vec<GpuInfo>,
    pub processes: Vec<GpuProcess>,
    pub mig_devices: Vec<MigDevice>,
    /// The failure line nvidia-smi printed, when it printed one.
    pub message: Option<String>,
    /// `NVML library version: 570.124` from a mismatch report: the user-space side.
    pub nvml_library_version: Option<String>,
}

impl NvidiaSmiReport {
    pub fn with_status(status: NvidiaSmiStatus) -> Self {
        Self {
            status,
            driver_version: None,
            cuda_version: None,
            gpus: Vec::new(),
            processes: Vec::new(),
            mig_devices: Vec::new(),
            message: None,
            nvml_library_version: None,
        }
    }

    /// Fill each process's GPU index from the GPU list, matching on UUID, then bus id.
    pub fn link_processes(&mut self) {
        for process in &mut self.processes {
            if process.gpu_index.is_some() {
                continue;
            }
            process.gpu_index = self
                .gpus
                .iter()
                .filter(|gpu| {
                    same_id(gpu.uuid.as_deref(), process.gpu_uuid.as_deref())
                        || same_bus(gpu.bus_id.as_deref(), process.gpu_bus_id.as_deref())
                })
                .map(|gpu| gpu.index)
                // Masked captures give every GPU the same zero UUID; only a unique match counts.
                .fold(None, |found: Option<Option<u32>>, index| match found {
                    None => Some(Some(index)),
                    Some(_) => Some(None),
                })
                .flatten();
        }
    }
}

fn same_id(a: Option<&str>, b: Option<&str>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a.eq_ignore_ascii_case(b))
}

/// Bus ids appear as `00000000:01:00.0` and `0000:01:00.0`; compare without the domain padding.
fn same_bus(a: Option<&str>, b: Option<&str>) -> bool {
    fn tail(id: &str) -> String {
        let lower = id.trim().to_ascii_lowercase();
        match lower.split_once(':') {
            Some((domain, rest)) => format!("{}:{rest}", domain.trim_start_matches('0')),
            None => lower,
        }
    }
    matches!((a, b), (Some(a), Some(b)) if tail(a) == tail(b))
}

/// Read any nvidia-smi output (table, CSV, XML, failure text, or several concatenated).
pub fn parse(text: &str) -> NvidiaSmiReport {
    let failure = classify_failure(text);
    let mut report = if text.contains("<nvidia_smi_log") {
        parse_xml(text)
            .unwrap_or_else(|_| NvidiaSmiReport::with_status(NvidiaSmiStatus::Unrecognized))
    } else if table::looks_like_table(text) {
        parse_table(text)
    } else if csv::looks_like_csv(text) {
        csv::parse_any_csv(text)
    } else {
        NvidiaSmiReport::with_status(NvidiaSmiStatus::Unrecognized)
    };
    if let Some(failure) = failure {
        failure.apply(&mut report);
    }
    report
}

#[cfg(test)]
mod tests;
