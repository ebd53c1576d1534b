//! The exact JSON shape of `leasehold parse nvidia-smi FILE --json`.
//!
//! Scripts depend on these keys, so this transport type carries only them and the rich
//! [`NvidiaSmiReport`] can grow without changing the contract.

use serde::Serialize;

use super::{GpuState, NvidiaSmiReport, NvidiaSmiStatus};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContractReport {
    pub status: NvidiaSmiStatus,
    pub driver_version: Option<String>,
    pub cuda_version: Option<String>,
    pub gpus: Vec<ContractGpu>,
    pub processes: Vec<ContractProcess>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContractGpu {
    pub index: u32,
    pub name: Option<String>,
    pub memory_total_mib: Option<u32>,
    pub memory_used_mib: Option<u32>,
    pub utilization_pct: Option<u32>,
    pub temperature_c: Option<i32>,
    pub power_draw_w: Option<f64>,
    pub power_limit_w: Option<f64>,
    pub state: GpuState,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContractProcess {
    pub gpu_index: Option<u32>,
    pub pid: u32,
    pub name: String,
    pub used_memory_mib: Option<u32>,
}

impl From<&NvidiaSmiReport> for ContractReport {
    fn from(report: &NvidiaSmiReport) -> Self {
        Self {
            status: report.status,
            driver_version: report.driver_version.clone(),
            cuda_version: report.cuda_version.clone(),
            gpus: report
                .gpus
                .iter()
                .map(|gpu| ContractGpu {
                    index: gpu.index,
                    name: gpu.name.clone(),
                    memory_total_mib: gpu.memory_total_mib,
                    memory_used_mib: gpu.memory_used_mib,
                    utilization_pct: gpu.utilization_pct,
                    temperature_c: gpu.temperature_c,
                    power_draw_w: gpu.power_draw_w,
                    power_limit_w: gpu.power_limit_w,
                    state: gpu.state,
                })
                .collect(),
            processes: report
                .processes
                .iter()
                .map(|p| ContractProcess {
                    gpu_index: p.gpu_index,
                    pid: p.pid,
                    name: p.name.clone(),
                    used_memory_mib: p.used_memory_mib,
                })
                .collect(),
        }
    }
}
