//! The rules, one file per area. Each takes the facts and returns zero or more findings.

mod driver;
mod gpu;
mod host;
mod network;
mod services;
pub(crate) use services::ollama_offload;
mod torch;

use super::text::Draft;
use super::{DiagnoseContext, Finding};
use crate::catalog::{choose_torch_wheel, TorchWheelChoice, TorchWheelRequest};
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

/// The PyTorch wheel the catalog picks for this machine's driver and first GPU (capability from
/// nvidia-smi, else from torch); `None` when the driver version is unknown.
pub(crate) fn wheel_choice(facts: &Facts) -> Option<TorchWheelChoice> {
    let smi = &facts.gpu.as_ref()?.nvidia_smi;
    let driver = smi.driver_version.clone()?;
    let gpu = smi.gpus.first();
    let compute_cap = gpu.and_then(|g| g.compute_cap.clone()).or_else(|| {
        facts
            .torch
            .as_ref()?
            .devices
            .first()
            .map(|d| d.capability.clone())
    });
    choose_torch_wheel(&TorchWheelRequest {
        driver,
        gpu: gpu.and_then(|g| g.name.clone()),
        compute_cap,
    })
    .ok()
}

/// The install step for the chosen wheel, or, when nothing fits, the catalog's reason (which
/// says to upgrade the driver or re-create the instance).
pub(crate) fn install_wheel_step(d: Draft, choice: Option<&TorchWheelChoice>) -> Draft {
    match choice {
        Some(choice) => match &choice.pip_command {
            Some(command) => d.run(
                format!(
                    "安装与驱动和这张 GPU 都匹配的轮子（{}，PyTorch {}）：",
                    choice.cuda_tag.as_deref().unwrap_or(""),
                    choice.torch_versions
                ),
                format!(
                    "Install the wheel that fits both the driver and this GPU ({}, PyTorch {}):",
                    choice.cuda_tag.as_deref().unwrap_or(""),
                    choice.torch_versions
                ),
                command.clone(),
            ),
            None => d.step(
                format!("没有哪个 PyTorch 轮子能在这个驱动上用这张卡：{}", choice.reason),
                format!("No PyTorch wheel can use this GPU with this driver: {}", choice.reason),
            ),
        },
        None => d.run(
            "到 PyTorch 官网选与驱动匹配的 CUDA 版本后安装，例如：",
            "Pick the CUDA build that matches the driver on pytorch.org, for example:",
            "pip install torch torchvision torchaudio --index-url https://download.pytorch.org/whl/cu124",
        ),
    }
}
