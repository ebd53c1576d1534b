//! `leasehold gpus`, `leasehold local-gpu` and `leasehold torch-wheel`: the catalog, this
//! computer's GPUs, and the PyTorch wheel for a rented machine.

use std::process::ExitCode;

use clap::Args;
use leasehold_core::catalog::sourced::sources;
use leasehold_core::catalog::{
    check_local_gpus, choose_torch_wheel, gpus, Task, TorchWheelRequest,
};
use serde::Serialize;

use crate::estimate::ModelArgs;
use crate::output::{fail, print_json};

#[derive(Args, Debug)]
pub struct GpusArgs {
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct LocalGpuArgs {
    /// With --params or --model: also say whether this task fits the local GPU.
    #[arg(long, default_value = "inference")]
    pub task: Task,
    #[command(flatten)]
    pub model: ModelArgs,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct TorchWheelArgs {
    /// Driver version as nvidia-smi prints it (e.g. 570.124.06).
    #[arg(long)]
    pub driver: String,
    /// GPU name as nvidia-smi prints it (e.g. "NVIDIA GeForce RTX 5090").
    #[arg(long)]
    pub gpu: Option<String>,
    /// Compute capability (e.g. 12.0); needed for GPUs the catalog does not know.
    #[arg(long)]
    pub compute_cap: Option<String>,
    #[arg(long)]
    pub json: bool,
}

pub fn run_gpus(args: &GpusArgs) -> ExitCode {
    if args.json {
        #[derive(Serialize)]
        struct Listing<'a> {
            gpus: &'a [leasehold_core::catalog::GpuSpec],
            sources:
                &'a std::collections::BTreeMap<String, leasehold_core::catalog::sourced::Source>,
        }
        return print_json(&Listing {
            gpus: gpus(),
            sources: sources(),
        });
    }
    say!(
        "{:<55} {:<13} {:>5} {:>8} {:>8}",
        "GPU",
        "architecture",
        "CC",
        "GiB",
        "TFLOPS"
    );
    for gpu in gpus() {
        let cc = gpu
            .compute_capability()
            .map(|c| c.to_string())
            .unwrap_or_default();
        let mem = gpu
            .usable_gib()
            .map(|g| format!("{g:.1}"))
            .unwrap_or_else(|| "?".into());
        let tflops = gpu
            .fp16_tensor_tflops
            .as_ref()
            .map(|t| format!("{}", t.value))
            .unwrap_or_else(|| "?".into());
        say!(
            "{:<55} {:<13} {cc:>5} {mem:>8} {tflops:>8}",
            gpu.name,
            gpu.architecture
        );
    }
    ExitCode::SUCCESS
}

pub fn run_local_gpu(args: &LocalGpuArgs) -> ExitCode {
    let wants_fit = args.model.params.is_some() || args.model.model.is_some();
    let request = wants_fit.then(|| args.model.request(args.task));
    let report = match check_local_gpus(request.as_ref()) {
        Ok(report) => report,
        Err(err) => return fail(&err),
    };
    if args.json {
        return print_json(&report);
    }
    match &report.reason {
        Some(reason) => say!("{reason}"),
        None => {
            if let Some(driver) = &report.driver_version {
                say!("driver {driver}");
            }
            for gpu in &report.gpus {
                say!(
                    "GPU {}: {} ({} MiB)",
                    gpu.index,
                    gpu.name,
                    gpu.memory_total_mib
                );
            }
        }
    }
    if let Some(fit) = &report.fit {
        say!("{}", fit.message.en);
    }
    ExitCode::SUCCESS
}

pub fn run_torch_wheel(args: &TorchWheelArgs) -> ExitCode {
    let request = TorchWheelRequest {
        driver: args.driver.clone(),
        gpu: args.gpu.clone(),
        compute_cap: args.compute_cap.clone(),
    };
    let choice = match choose_torch_wheel(&request) {
        Ok(choice) => choice,
        Err(err) => return fail(&err),
    };
    if args.json {
        return print_json(&choice);
    }
    match (&choice.cuda_tag, &choice.pip_command) {
        (Some(tag), Some(pip)) => {
            say!("{tag} (PyTorch {})", choice.torch_versions);
            say!("{pip}");
        }
        _ => say!("no PyTorch wheel fits"),
    }
    say!("{}", choice.reason);
    ExitCode::SUCCESS
}
