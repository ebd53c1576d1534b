//! `leasehold`: every Leasehold capability without the window.
//!
//! One file per command group; each parses its arguments, calls leasehold-core, and prints
//! through `output`. Exit codes: 0 success, 2 bad input, 1 other failure.

mod estimate;
mod gpus;
mod output;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(
    name = "leasehold",
    version,
    about = "Rent cloud GPUs without losing hours or money"
)]
struct Cli {
    /// Database file (defaults to the OS app-data folder). Accepted before or after the command.
    #[arg(long, global = true)]
    db: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

impl Cli {
    fn db_path(&self) -> PathBuf {
        self.db
            .clone()
            .unwrap_or_else(leasehold_core::paths::default_db_path)
    }
}

#[derive(clap::Subcommand)]
enum Command {
    /// Print where Leasehold keeps its data.
    Paths,
    /// Estimate the GPU memory a task needs, part by part.
    Estimate(estimate::EstimateArgs),
    /// Rank GPUs (single and multi-GPU) that fit a task, cheapest plan first when priced.
    Recommend(estimate::RecommendArgs),
    /// Choose the PyTorch CUDA wheel for a driver version and GPU.
    TorchWheel(gpus::TorchWheelArgs),
    /// List the GPU catalog with sourced specs.
    Gpus(gpus::GpusArgs),
    /// Show this computer's NVIDIA GPUs (and whether a task fits them).
    LocalGpu(gpus::LocalGpuArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() {
                output::EXIT_BAD_INPUT
            } else {
                0
            };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    match &cli.command {
        Command::Paths => {
            println!("db: {}", cli.db_path().display());
            println!("logs: {}", leasehold_core::paths::log_dir().display());
            ExitCode::SUCCESS
        }
        Command::Estimate(args) => estimate::run_estimate(args),
        Command::Recommend(args) => estimate::run_recommend(args),
        Command::TorchWheel(args) => gpus::run_torch_wheel(args),
        Command::Gpus(args) => gpus::run_gpus(args),
        Command::LocalGpu(args) => gpus::run_local_gpu(args),
    }
}
