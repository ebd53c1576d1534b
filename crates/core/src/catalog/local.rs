//! This computer's own NVIDIA GPUs, read through NVML, so the Choose GPU step can say "your
//! laptop can already do this; renting is optional".
//!
//! NVML is loaded at run time (nvml-wrapper opens libnvidia-ml / nvml.dll dynamically), so a
//! machine without an NVIDIA driver simply reports "no local NVIDIA GPU". Detection
//! ([`detect_local_gpus`]) is the only impure part; turning what was detected into the report
//! and the fit message ([`local_gpu_report`]) is pure and tested on made-up detections.

use nvml_wrapper::error::NvmlError;
use nvml_wrapper::Nvml;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::estimate::{estimate, Estimate, EstimateRequest, Text};
use super::gpus::find_gpu_with_memory;
use super::recommend::MIN_HEADROOM_PCT;
use super::CatalogError;

/// One GPU of this computer as NVML reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct LocalGpu {
    pub index: u32,
    pub name: String,
    #[ts(type = "number")]
    pub memory_total_mib: u64,
    pub compute_capability: Option<String>,
    /// The matching catalog entry, if any.
    pub catalog_id: Option<String>,
}

/// Why no GPU could be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Unavailable {
    /// No NVML library: no NVIDIA driver installed (or a Mac).
    NoDriver,
    /// The library is there but the kernel driver is not loaded.
    DriverNotLoaded,
    /// The driver's user-space library and kernel module disagree (usually after an update
    /// without a reboot).
    DriverMismatch,
    /// NVML works and sees no GPU.
    NoDevices,
    /// Anything else NVML said.
    Other(String),
}

/// The result of looking, before any interpretation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Detection {
    Found {
        driver_version: Option<String>,
        gpus: Vec<LocalGpu>,
    },
    Unavailable(Unavailable),
}

/// Whether the task fits one of this computer's GPUs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct LocalFit {
    pub gpu: String,
    pub need_gib: f64,
    pub have_gib: f64,
    pub fits: bool,
    pub message: Text,
}

/// What `leasehold local-gpu` prints and the wizard shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct LocalGpuReport {
    pub available: bool,
    /// Why nothing was found (English); `reason_text` has both languages.
    pub reason: Option<String>,
    pub reason_text: Option<Text>,
    pub driver_version: Option<String>,
    pub gpus: Vec<LocalGpu>,
    /// Present when an estimate was given.
    pub fit: Option<LocalFit>,
}

/// Read this computer's NVIDIA GPUs through NVML. Never fails: every problem is a
/// [`Detection::Unavailable`].
pub fn detect_local_gpus() -> Detection {
    let nvml = match Nvml::init() {
        Ok(nvml) => nvml,
        Err(err) => return Detection::Unavailable(classify(&err)),
    };
    let count = match nvml.device_count() {
        Ok(count) => count,
        Err(err) => return Detection::Unavailable(classify(&err)),
    };
    let mut gpus = Vec::new();
    for index in 0..count {
        // A GPU that cannot be read (fallen off the bus, no permission) is skipped, not fatal.
        let Ok(device) = nvml.device_by_index(index) else {
            continue;
        };
        let name = device.name().unwrap_or_else(|_| format!("GPU {index}"));
        let memory_total_mib = device
            .memory_info()
            .map(|m| m.total / (1024 * 1024))
            .unwrap_or(0);
        let compute_capability = device
            .cuda_compute_capability()
            .ok()
            .map(|cc| format!("{}.{}", cc.major, cc.minor));
        let catalog_id = find_gpu_with_memory(&name, Some(memory_total_mib)).map(|g| g.id.clone());
        gpus.push(LocalGpu {
            index,
            name,
            memory_total_mib,
            compute_capability,
            catalog_id,
        });
    }
    Detection::Found {
        driver_version: nvml.sys_driver_version().ok(),
        gpus,
    }
}

fn classify(err: &NvmlError) -> Unavailable {
    match err {
        NvmlError::LibloadingError(_)
        | NvmlError::LibraryNotFound
        | NvmlError::FailedToLoadSymbol(_) => Unavailable::NoDriver,
        NvmlError::DriverNotLoaded => Unavailable::DriverNotLoaded,
        NvmlError::LibRmVersionMismatch => Unavailable::DriverMismatch,
        NvmlError::NotFound => Unavailable::NoDevices,
        other => Unavailable::Other(other.to_string()),
    }
}

/// This computer's GPUs and, given a task, whether it fits the largest one: the estimate, the
/// detection and the report in one call for the Choose GPU page and `leasehold local-gpu`. Only a
/// bad request fails; a computer without NVIDIA GPUs is a report that says so.
pub fn check_local_gpus(request: Option<&EstimateRequest>) -> Result<LocalGpuReport, CatalogError> {
    let estimate = request.map(estimate).transpose()?;
    Ok(local_gpu_report(&detect_local_gpus(), estimate.as_ref()))
}

/// Turn a detection (and optionally an estimate) into the report. Pure.
pub fn local_gpu_report(detection: &Detection, estimate: Option<&Estimate>) -> LocalGpuReport {
    match detection {
        Detection::Unavailable(why) => {
            let text = unavailable_text(why);
            LocalGpuReport {
                available: false,
                reason: Some(text.en.clone()),
                reason_text: Some(text),
                driver_version: None,
                gpus: Vec::new(),
                fit: None,
            }
        }
        Detection::Found { gpus, .. } if gpus.is_empty() => {
            local_gpu_report(&Detection::Unavailable(Unavailable::NoDevices), estimate)
        }
        Detection::Found {
            driver_version,
            gpus,
        } => LocalGpuReport {
            available: true,
            reason: None,
            reason_text: None,
            driver_version: driver_version.clone(),
            gpus: gpus.clone(),
            fit: estimate.and_then(|e| fit(gpus, e)),
        },
    }
}

fn fit(gpus: &[LocalGpu], estimate: &Estimate) -> Option<LocalFit> {
    // The largest card decides; the estimate is per single GPU.
    let best = gpus.iter().max_by_key(|gpu| gpu.memory_total_mib)?;
    let have = best.memory_total_mib as f64 / 1024.0;
    let need = estimate.total_gib;
    let fits = have > 0.0 && (have - need) / have * 100.0 >= MIN_HEADROOM_PCT;
    let message = if fits {
        Text::new(
            format!(
                "This computer's {} ({have:.0} GiB) can run it (needs ≈ {need:.1} GiB); renting is optional.",
                best.name
            ),
            format!(
                "本机的 {}（{have:.0} GiB）就能运行（约需 {need:.1} GiB），不一定要租卡。",
                best.name
            ),
        )
    } else {
        Text::new(
            format!(
                "This computer's {} has {have:.0} GiB; the task needs ≈ {need:.1} GiB. Rent a bigger GPU, or lower the precision, context or batch.",
                best.name
            ),
            format!(
                "本机的 {} 只有 {have:.0} GiB，任务约需 {need:.1} GiB。请租用更大的显卡，或降低精度、上下文或 batch。",
                best.name
            ),
        )
    };
    Some(LocalFit {
        gpu: best.name.clone(),
        need_gib: need,
        have_gib: (have * 10.0).round() / 10.0,
        fits,
        message,
    })
}

fn unavailable_text(why: &Unavailable) -> Text {
    match why {
        Unavailable::NoDriver => Text::new(
            "No local NVIDIA GPU: no NVIDIA driver (NVML) on this computer. Renting a GPU is the way to go.",
            "本机没有 NVIDIA GPU：未找到 NVIDIA 驱动（NVML）。租用云 GPU 即可。",
        ),
        Unavailable::DriverNotLoaded => Text::new(
            "No local NVIDIA GPU in use: the NVIDIA driver is installed but not loaded (check `lsmod | grep nvidia`, or reboot).",
            "本机 NVIDIA GPU 不可用：已安装驱动但未加载（可用 `lsmod | grep nvidia` 检查，或重启）。",
        ),
        Unavailable::DriverMismatch => Text::new(
            "No local NVIDIA GPU in use: the driver library and kernel module versions differ, usually after a driver update; reboot.",
            "本机 NVIDIA GPU 不可用：驱动库与内核模块版本不一致，通常是更新驱动后未重启；请重启。",
        ),
        Unavailable::NoDevices => Text::new(
            "No local NVIDIA GPU: the driver is present but sees no GPU.",
            "本机没有可用的 NVIDIA GPU：驱动存在，但没有识别到显卡。",
        ),
        Unavailable::Other(detail) => Text::new(
            format!("No local NVIDIA GPU could be read ({detail})."),
            format!("无法读取本机 NVIDIA GPU（{detail}）。"),
        ),
    }
}

#[cfg(test)]
#[path = "local_tests.rs"]
mod tests;
