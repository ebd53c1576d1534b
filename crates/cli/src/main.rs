//! `leasehold`: every Leasehold capability without the window.
//!
//! One file per command group; each parses its arguments, calls leasehold-core, and prints
//! through `output`. Exit codes: 0 success, 2 bad input, 1 other failure.

/// `println!` that survives a closed pipe; see [`output::say`].
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::output::say(format_args!($($arg)*))
    };
}

/// `eprintln!` for messages on stderr (kept beside `say!` so output goes through one place).
macro_rules! esay {
    ($($arg:tt)*) => {
        $crate::output::esay(format_args!($($arg)*))
    };
}

mod account;
mod backup;
mod cost;
mod estimate;
mod estimate_cost;
mod explain;
mod gpus;
mod install;
mod instance;
mod job;
mod keeper;
mod ledger;
mod market;
mod monitor;
mod output;
mod parse;
mod paths;
mod release;
mod remind;
mod rent_vs_buy;
mod rule_flags;
mod ssh;
mod stop;
mod team;
mod verify;
mod version;
mod watchdog;

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
    /// Print where Leasehold keeps its data and which OpenSSH files it reads.
    Paths {
        #[arg(long)]
        json: bool,
    },
    /// Read a saved tool output (e.g. `parse nvidia-smi FILE --json`).
    #[command(subcommand)]
    Parse(parse::ParseCommand),
    /// Check a rented machine (or this computer): probes, then findings with fixes.
    Verify(verify::VerifyArgs),
    /// What an error text (traceback, log, dmesg) means and what to do about it.
    Explain(explain::ExplainArgs),
    /// Record rentals and their power changes.
    #[command(subcommand)]
    Instance(instance::InstanceCommand),
    /// What an instance has cost so far.
    Cost(cost::CostArgs),
    /// What an instance will have cost at a later time if nothing changes.
    Forecast(cost::ForecastArgs),
    /// Price a job before renting (and a split job under each stopped-billing rule).
    EstimateCost(Box<estimate_cost::EstimateCostArgs>),
    /// After how many months buying the card pays for itself.
    RentVsBuy(Box<rent_vs_buy::RentVsBuyArgs>),
    /// What each provider preset pre-fills (never prices).
    Presets {
        #[arg(long)]
        json: bool,
    },
    /// Read a provider's `ssh …` command: host, port, user, key, jump hosts, ignored options.
    SshParse {
        /// The command, quoted as one argument.
        command: String,
        #[arg(long)]
        json: bool,
    },
    /// Run a command on the instance, like `ssh HOST COMMAND` (exit code = the remote one,
    /// 255 when connecting fails).
    Exec {
        #[command(flatten)]
        ssh: ssh::SshArgs,
        /// Stop the command after this many seconds.
        #[arg(long, value_name = "SECONDS")]
        timeout: Option<u64>,
        /// The remote command; its words are joined with spaces for the remote shell.
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<String>,
    },
    /// Copy files or folders over SFTP; write the remote side as :path. Resumes and verifies.
    Copy {
        #[command(flatten)]
        ssh: ssh::SshArgs,
        source: String,
        destination: String,
        /// Print the transfer report as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Forward a local port to a port on the instance until Ctrl-C.
    Forward {
        #[command(flatten)]
        ssh: ssh::SshArgs,
        /// LOCAL_PORT:REMOTE_PORT (or LOCAL_PORT:HOST:REMOTE_PORT).
        spec: String,
    },
    /// Estimate the GPU memory a task needs, part by part.
    Estimate(estimate::EstimateArgs),
    /// Rank GPUs (single and multi-GPU) that fit a task, cheapest plan first when priced.
    Recommend(estimate::RecommendArgs),
    /// Live offers from the providers' catalogs: refresh, list, alerts.
    #[command(subcommand)]
    Market(market::MarketCommand),
    /// Rent a market offer through the provider's API; recorded at once.
    Rent(Box<market::RentArgs>),
    /// Choose the PyTorch CUDA wheel for a driver version and GPU.
    TorchWheel(gpus::TorchWheelArgs),
    /// List the GPU catalog with sourced specs.
    Gpus(gpus::GpusArgs),
    /// Show this computer's NVIDIA GPUs (and whether a task fits them).
    LocalGpu(gpus::LocalGpuArgs),
    /// Detached jobs on the instance that survive a dropped link.
    #[command(subcommand)]
    Job(job::JobCommand),
    /// Install a recipe on the instance as a detached job, following its log.
    Install(Box<install::InstallArgs>),
    /// Print a recipe's script without connecting.
    InstallScript(install::InstallScriptArgs),
    /// Print one standalone script that replays the recipes that succeeded on an instance.
    ExportSetup {
        /// A recorded instance name, or a target (user@host:port, or the host).
        instance: String,
    },
    /// Watch every GPU live (utilisation, memory, temperature, power) with findings.
    Monitor(Box<monitor::MonitorArgs>),
    /// Reminders: what is due, and a test message to a webhook.
    #[command(subcommand)]
    Remind(remind::RemindCommand),
    /// The idle/TTL guard on the instance that powers a forgotten rental off.
    #[command(subcommand)]
    Watchdog(watchdog::WatchdogCommand),
    /// Power a recorded instance off now; records `stopped` once confirmed.
    Stop(Box<stop::StopArgs>),
    /// Provider accounts: every instance the provider bills, its power, and its bill.
    #[command(subcommand)]
    Account(account::AccountCommand),
    /// The keeper: power-on hunts, clean-up deadlines, the two-stage policy.
    #[command(subcommand)]
    Keeper(keeper::KeeperCommand),
    /// Share the ledger with a team through PostgreSQL (connect, sync, status, disconnect).
    #[command(subcommand)]
    Team(team::TeamCommand),
    /// Find what would be lost with the instance, and save it here.
    #[command(subcommand)]
    Backup(backup::BackupCommand),
    /// Run the release checklist live on the instance and record the result.
    ReleaseCheck(Box<release::ReleaseCheckArgs>),
    /// Record the release (after releasing in the provider's console) once nothing blocks it;
    /// prints the final bill.
    Release(Box<release::ReleaseArgs>),
    /// This build's version, date and channel; `--check` asks whether a newer one exists
    /// (exit 10 when it does).
    Version(version::VersionArgs),
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
        Command::Paths { json } => paths::run(&cli.db_path(), *json),
        Command::Parse(command) => parse::run(command),
        Command::Verify(args) => verify::run(&cli.db_path(), args),
        Command::Explain(args) => explain::run(&cli.db_path(), args),
        Command::Instance(command) => instance::run(&cli.db_path(), command),
        Command::Cost(args) => cost::run_cost(&cli.db_path(), args),
        Command::Forecast(args) => cost::run_forecast(&cli.db_path(), args),
        Command::EstimateCost(args) => estimate_cost::run(args),
        Command::RentVsBuy(args) => rent_vs_buy::run(args),
        Command::Presets { json } => ledger::run_presets(*json),
        Command::SshParse { command, json } => ssh::ssh_parse(command, *json),
        Command::Exec {
            ssh,
            timeout,
            command,
        } => ssh::exec(ssh, command, *timeout),
        Command::Copy {
            ssh,
            source,
            destination,
            json,
        } => ssh::copy(ssh, source, destination, *json),
        Command::Forward { ssh, spec } => ssh::forward(ssh, spec),
        Command::Estimate(args) => estimate::run_estimate(args),
        Command::Recommend(args) => estimate::run_recommend(args, &cli.db_path()),
        Command::Market(command) => market::run(&cli.db_path(), command),
        Command::Rent(args) => market::run_rent(&cli.db_path(), args),
        Command::TorchWheel(args) => gpus::run_torch_wheel(args),
        Command::Gpus(args) => gpus::run_gpus(args),
        Command::LocalGpu(args) => gpus::run_local_gpu(args),
        Command::Job(command) => job::run(&cli.db_path(), command),
        Command::Install(args) => install::run_install(&cli.db_path(), args),
        Command::InstallScript(args) => install::run_install_script(args),
        Command::ExportSetup { instance } => install::run_export_setup(&cli.db_path(), instance),
        Command::Monitor(args) => monitor::run(args),
        Command::Remind(command) => remind::run(&cli.db_path(), command),
        Command::Watchdog(command) => watchdog::run(command),
        Command::Stop(args) => stop::run(&cli.db_path(), args),
        Command::Team(command) => team::run(&cli.db_path(), command),
        Command::Account(command) => account::run(&cli.db_path(), command),
        Command::Keeper(command) => keeper::run(&cli.db_path(), command),
        Command::Backup(command) => backup::run(&cli.db_path(), command),
        Command::ReleaseCheck(args) => release::check(&cli.db_path(), args),
        Command::Release(args) => release::release(&cli.db_path(), args),
        Command::Version(args) => version::run(args),
    }
}
