//! The same events on this computer, from NVML (through nvml-wrapper, loaded at run time like
//! the catalog's local GPU check): no process is started at all. NVML also gives PCIe throughput,
//! which `nvidia-smi --query-gpu` cannot.

use std::ops::ControlFlow;

use nvml_wrapper::enum_wrappers::device::{Clock as NvmlClock, PcieUtilCounter, TemperatureSensor};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::{Device, Nvml};

use super::event::MonitorEvent;
use super::sample::{ComputeProcess, GpuReading, ProcessList, Sample, ThrottleReason};
use super::{consume, FindingContext, MonitorError, SamplerOptions};
use crate::clock::Clock;

const MIB: u64 = 1024 * 1024;

fn reading(index: u32, device: &Device<'_>) -> GpuReading {
    let mut gpu = GpuReading::new(index);
    gpu.uuid = device.uuid().ok();
    gpu.utilization_pct = device.utilization_rates().ok().map(|u| u.gpu.min(100));
    if let Ok(memory) = device.memory_info() {
        gpu.memory_used_mib = Some(memory.used / MIB);
        gpu.memory_total_mib = Some(memory.total / MIB);
    }
    gpu.temperature_c = device.temperature(TemperatureSensor::Gpu).ok();
    gpu.power_draw_w = device.power_usage().ok().map(|mw| f64::from(mw) / 1000.0);
    gpu.power_limit_w = device
        .enforced_power_limit()
        .ok()
        .map(|mw| f64::from(mw) / 1000.0);
    gpu.sm_clock_mhz = device.clock_info(NvmlClock::SM).ok();
    gpu.throttle = device
        .current_throttle_reasons()
        .map(|reasons| ThrottleReason::from_mask(reasons.bits()))
        .unwrap_or_default();
    gpu.pcie_rx_kib_s = device
        .pcie_throughput(PcieUtilCounter::Receive)
        .ok()
        .map(u64::from);
    gpu.pcie_tx_kib_s = device
        .pcie_throughput(PcieUtilCounter::Send)
        .ok()
        .map(u64::from);
    gpu
}

fn processes(nvml: &Nvml, index: u32, device: &Device<'_>) -> Vec<ComputeProcess> {
    let uuid = device.uuid().unwrap_or_default();
    device
        .running_compute_processes()
        .unwrap_or_default()
        .into_iter()
        .map(|p| ComputeProcess {
            gpu_index: Some(index),
            gpu_uuid: uuid.clone(),
            pid: p.pid,
            name: nvml.sys_process_name(p.pid, 256).unwrap_or_default(),
            used_memory_mib: match p.used_gpu_memory {
                UsedGpuMemory::Used(bytes) => Some(bytes / MIB),
                UsedGpuMemory::Unavailable => None,
            },
        })
        .collect()
}

/// Sample this computer's GPUs until `sink` says stop. Without an NVIDIA driver (or GPU) it
/// fails at once with [`MonitorError::NoLocalDriver`].
pub async fn run_local(
    clock: &dyn Clock,
    options: &SamplerOptions,
    context: &FindingContext,
    sink: &mut (dyn FnMut(MonitorEvent) -> ControlFlow<()> + Send),
) -> Result<(), MonitorError> {
    let nvml = Nvml::init().map_err(|err| MonitorError::NoLocalDriver {
        reason: err.to_string(),
    })?;
    let count = nvml
        .device_count()
        .map_err(|err| MonitorError::NoLocalDriver {
            reason: err.to_string(),
        })?;
    if count == 0 {
        return Err(MonitorError::NoLocalDriver {
            reason: "NVML sees no GPU".to_owned(),
        });
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let every = (options.processes_every.as_millis() / options.interval.as_millis().max(1)).max(1);
    let producer = async {
        let mut ticker = tokio::time::interval(options.interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut tick: u128 = 0;
        loop {
            ticker.tick().await;
            let devices: Vec<(u32, Device<'_>)> = (0..count)
                .filter_map(|i| nvml.device_by_index(i).ok().map(|d| (i, d)))
                .collect();
            let gpus = devices.iter().map(|(i, d)| reading(*i, d)).collect();
            let _ = tx.send(MonitorEvent::Sample(Sample {
                at: clock.now(),
                gpus,
            }));
            if tick.is_multiple_of(every) {
                let list = devices
                    .iter()
                    .flat_map(|(i, d)| processes(&nvml, *i, d))
                    .collect();
                let _ = tx.send(MonitorEvent::Processes(ProcessList {
                    at: clock.now(),
                    processes: list,
                }));
            }
            tick += 1;
        }
    };
    tokio::select! {
        () = producer => Ok(()),
        () = consume(rx, context, sink) => Ok(()),
    }
}
