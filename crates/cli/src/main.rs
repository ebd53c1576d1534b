//! `leasehold`: every Leasehold capability without the window.
//!
//! One file per command group; each parses its arguments, calls leasehold-core, and prints
//! through `output`. Exit codes: 0 success, 2 bad input, 1 other failure.

mod output;
mod parse;
mod verify;

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
    /// Read a saved tool output (e.g. `parse nvidia-smi FILE --json`).
    #[command(subcommand)]
    Parse(parse::ParseCommand),
    /// Check a rented machine (or this computer): probes, then findings with fixes.
    Verify(verify::VerifyArgs),
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
        Command::Parse(command) => parse::run(command),
        Command::Verify(args) => verify::run(args),
    }
}
