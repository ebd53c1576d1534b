//! `leasehold parse nvidia-smi FILE`: read a saved nvidia-smi output and print what it says.

use std::path::PathBuf;
use std::process::ExitCode;

use leasehold_core::probe::nvidia_smi::{self, ContractReport};

use crate::output;

#[derive(clap::Subcommand)]
pub enum ParseCommand {
    /// Any nvidia-smi output: plain table, --query-gpu/--query-compute-apps CSV, -q -x XML or an
    /// error text.
    NvidiaSmi {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(command: &ParseCommand) -> ExitCode {
    match command {
        ParseCommand::NvidiaSmi { file, json } => {
            let bytes = match std::fs::read(file) {
                Ok(bytes) => bytes,
                Err(err) => {
                    return output::bad_input(format!("cannot read {}: {err}", file.display()))
                }
            };
            let report = nvidia_smi::parse(&String::from_utf8_lossy(&bytes));
            let contract = ContractReport::from(&report);
            if *json {
                return output::print_json(&contract);
            }
            print_text(&contract);
            ExitCode::SUCCESS
        }
    }
}

fn print_text(report: &ContractReport) {
    let status = serde_json::to_value(report.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    say!(
        "status: {status}  driver: {}  CUDA: {}",
        report.driver_version.as_deref().unwrap_or("-"),
        report.cuda_version.as_deref().unwrap_or("-")
    );
    for gpu in &report.gpus {
        let opt = |v: Option<u32>| v.map_or("-".to_owned(), |v| v.to_string());
        say!(
            "GPU {}  {}  {}/{} MiB  {}%  {:?}",
            gpu.index,
            gpu.name.as_deref().unwrap_or("?"),
            opt(gpu.memory_used_mib),
            opt(gpu.memory_total_mib),
            opt(gpu.utilization_pct),
            gpu.state
        );
    }
    for process in &report.processes {
        say!(
            "  pid {} {} {} MiB",
            process.pid,
            process.name,
            process
                .used_memory_mib
                .map_or("-".to_owned(), |v| v.to_string())
        );
    }
}
