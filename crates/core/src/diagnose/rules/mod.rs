//! The rules, one file per area. Each takes the facts and returns zero or more findings.

mod driver;
mod gpu;
mod host;
mod network;
mod services;
mod torch;

use super::{DiagnoseContext, Finding};
use crate::probe::nvidia_smi::{GpuInfo, NvidiaSmiStatus};
use crate::probe::Facts;

pub(crate) fn all(facts: &Facts, context: &DiagnoseContext) -> Vec<Finding> {
    let mut findings = Vec::new();
    findings.extend(driver::check(facts, context));
    findings.extend(gpu::check(facts, context));
    findings.extend(host::check(facts, context));
    findings.extend(torch::check(facts, context));
    findings.extend(services::check(facts, context));
    findings.extend(network::check(facts, context));
    findings
}

/// The GPUs nvidia-smi listed (empty when it failed or did not run).
fn gpus(facts: &Facts) -> &[GpuInfo] {
    facts
        .gpu
        .as_ref()
        .map_or(&[], |g| g.nvidia_smi.gpus.as_slice())
}

/// nvidia-smi ran and answered normally.
fn driver_works(facts: &Facts) -> bool {
    facts.gpu.as_ref().is_some_and(|g| {
        g.nvidia_smi.status == NvidiaSmiStatus::Ok && !g.nvidia_smi.gpus.is_empty()
    })
}

fn driver_status(facts: &Facts) -> Option<NvidiaSmiStatus> {
    facts.gpu.as_ref().map(|g| g.nvidia_smi.status)
}

/// `8.9` → 89, `12.0` → 120 (the `sm_XY` number).
fn sm_number(capability: &str) -> Option<u32> {
    let (major, minor) = capability.trim().split_once('.')?;
    Some(major.parse::<u32>().ok()? * 10 + minor.parse::<u32>().ok()?)
}

/// `12.4` → (12, 4).
fn major_minor(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.trim().split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().map_or(Some(0), |m| m.parse().ok())?;
    Some((major, minor))
}
