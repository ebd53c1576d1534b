//! `leasehold verify`: run the probe battery on an instance (or this computer) and print the
//! facts and findings. A report: exit 0 even with findings; 1 when the machine was unreachable.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use leasehold_core::diagnose::{Finding, Lang, Severity};
use leasehold_core::probe::{BatteryOptions, ProbeEvent, ProbeId, ProbeOutcome};
use leasehold_core::ssh::{ConnectRequest, Secret};
use leasehold_core::store::Store;
use leasehold_core::target::LocalTarget;
use leasehold_core::verify::history::{self, RecordedRun};
use leasehold_core::verify::{self, CheckRequest, Checked, VerifyError, VerifyReport};
use leasehold_core::Clock;

use crate::ledger::CLOCK;
use crate::output;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("where").required(true).args(["ssh", "local"])))]
pub struct VerifyArgs {
    /// The provider's SSH command, e.g. "ssh -p 12345 root@region-1.autodl.com".
    #[arg(long)]
    ssh: Option<String>,
    /// Probe this computer instead of an instance.
    #[arg(long)]
    local: bool,
    /// Private key file (may be repeated).
    #[arg(short = 'i', long = "identity")]
    identity: Vec<PathBuf>,
    /// Use only this known_hosts file.
    #[arg(long)]
    known_hosts: Option<PathBuf>,
    /// Read the SSH password from this environment variable.
    #[arg(long)]
    password_env: Option<String>,
    /// Trust a host key seen for the first time (never a changed one).
    #[arg(long)]
    accept_new_host_key: bool,
    /// Also run the matmul stress test (about 10 s per GPU).
    #[arg(long)]
    stress: bool,
    /// GPUs the rental promised; fewer visible is reported. Default: the count recorded for
    /// --instance, if given.
    #[arg(long)]
    expect_gpus: Option<u32>,
    /// Leave out a probe (system, gpu, python, conda, torch, docker, ollama, network).
    #[arg(long, value_name = "PROBE")]
    skip: Vec<String>,
    /// Keep the run under this recorded instance (see `leasehold instance add`).
    #[arg(long)]
    instance: Option<String>,
    /// Do not keep the run in the database.
    #[arg(long)]
    no_store: bool,
    /// Language of the findings: zh-CN or en (default from LANG).
    #[arg(long)]
    lang: Option<String>,
    #[arg(long)]
    json: bool,
}

pub fn run(db: &Path, args: &VerifyArgs) -> ExitCode {
    let lang = match &args.lang {
        Some(tag) => match Lang::from_tag(tag) {
            Some(lang) => lang,
            None => return output::bad_input(format!("--lang {tag}: use zh-CN or en")),
        },
        None => Lang::from_locale(std::env::var("LANG").ok().as_deref()),
    };
    let mut options = BatteryOptions::default();
    options.stress = args.stress;
    for name in &args.skip {
        match ProbeId::parse(name) {
            Some(probe) => options.skip.push(probe),
            None => return output::bad_input(format!("--skip {name}: not a probe name")),
        }
    }
    let password = match &args.password_env {
        Some(var) => match std::env::var(var) {
            Ok(value) => Some(Secret::new(value)),
            Err(_) => {
                return output::bad_input(format!("--password-env {var}: the variable is not set"))
            }
        },
        None => None,
    };
    let request = CheckRequest {
        options,
        lang,
        expected_gpus: args.expect_gpus,
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            esay!("error: cannot start the async runtime: {err}");
            return ExitCode::from(output::EXIT_FAILURE);
        }
    };
    let quiet = args.json;
    let sink = move |event: ProbeEvent| {
        if !quiet {
            print_progress(&event);
        }
    };
    let store = if args.no_store {
        None
    } else {
        match runtime.block_on(open_store(db, args.instance.as_deref())) {
            Ok(store) => store,
            Err(err) => return output::fail(&err),
        }
    };
    let instance = args.instance.as_deref();
    let result = runtime.block_on(async {
        let now = CLOCK.now();
        match &args.ssh {
            Some(command) => {
                let connect = ConnectRequest {
                    ssh_command: command.clone(),
                    identity_files: args.identity.clone(),
                    known_hosts: args.known_hosts.clone(),
                    accept_new_host_key: args.accept_new_host_key,
                    password,
                    connect_timeout: None,
                    boot_wait: std::time::Duration::ZERO,
                };
                let target = connect.connect().await.map_err(VerifyError::from)?;
                let checked = verify::check_and_record(
                    &target,
                    store.as_ref(),
                    instance,
                    &request,
                    &sink,
                    now,
                )
                .await;
                target.disconnect().await;
                checked
            }
            None => {
                verify::check_and_record(
                    &LocalTarget,
                    store.as_ref(),
                    instance,
                    &request,
                    &sink,
                    now,
                )
                .await
            }
        }
    });
    if let Some(store) = store {
        runtime.block_on(store.close());
    }
    let Checked { report, recorded } = match result {
        Ok(checked) => checked,
        Err(err) => return output::fail(&err),
    };
    let recorded = match recorded {
        Some(Err(err)) => {
            esay!("warning: the run was not saved: {err}");
            None
        }
        Some(Ok(recorded)) => Some(recorded),
        None => None,
    };
    if args.json {
        return output::print_json(&report);
    }
    print_report(&report, lang);
    if let Some(recorded) = recorded {
        print_changes(&recorded, lang);
    }
    ExitCode::SUCCESS
}

/// The database, when runs are kept. Naming an instance requires it to exist; otherwise a
/// database that cannot be opened only costs the history, not the report.
async fn open_store(db: &Path, instance: Option<&str>) -> Result<Option<Store>, VerifyError> {
    match instance {
        Some(name) => {
            let store = Store::open(db).await?;
            history::check_instance(&store, name).await?;
            Ok(Some(store))
        }
        None => match Store::open(db).await {
            Ok(store) => Ok(Some(store)),
            Err(err) => {
                esay!("warning: runs will not be saved: {err}");
                Ok(None)
            }
        },
    }
}

fn print_changes(recorded: &RecordedRun, lang: Lang) {
    let Some(changes) = &recorded.changes else {
        return;
    };
    if changes.is_empty() {
        say!(
            "{}",
            lang.pick(
                "与上次检查相比没有变化。",
                "Nothing changed since the last run."
            )
        );
        return;
    }
    say!("{}", lang.pick("与上次检查相比：", "Since the last run:"));
    for finding in &changes.new_findings {
        say!("  + {} ({})", finding.title, finding.code);
    }
    for finding in &changes.resolved_findings {
        say!("  - {} ({})", finding.title, finding.code);
    }
    for fact in &changes.changed_facts {
        say!(
            "  {}: {} → {}",
            fact.path,
            fact.before.as_deref().unwrap_or("-"),
            fact.after.as_deref().unwrap_or("-")
        );
    }
}

fn print_progress(event: &ProbeEvent) {
    if let ProbeEvent::Finished { run } = event {
        let mark = match run.outcome {
            ProbeOutcome::Ok => "ok",
            ProbeOutcome::Failed => "FAILED",
            ProbeOutcome::TimedOut => "TIMED OUT",
            ProbeOutcome::Skipped => return,
        };
        let why = run
            .message
            .as_deref()
            .map(|m| format!(" ({m})"))
            .unwrap_or_default();
        esay!(
            "  {:<8} {mark} in {} ms{why}",
            run.probe.as_str(),
            run.duration_ms
        );
    }
}

fn print_report(report: &VerifyReport, lang: Lang) {
    let facts = &report.facts;
    say!("{}", facts.target);
    if let Some(gpu) = &facts.gpu {
        let smi = &gpu.nvidia_smi;
        say!(
            "  driver {}  CUDA {}  GPUs {}",
            smi.driver_version.as_deref().unwrap_or("-"),
            smi.cuda_version.as_deref().unwrap_or("-"),
            smi.gpus.len()
        );
        for g in &smi.gpus {
            say!(
                "  GPU {}: {}  {}/{} MiB",
                g.index,
                g.name.as_deref().unwrap_or("?"),
                g.memory_used_mib.map_or("-".into(), |v| v.to_string()),
                g.memory_total_mib.map_or("-".into(), |v| v.to_string())
            );
        }
    }
    if let Some(torch) = &facts.torch {
        if let Some(version) = &torch.version {
            say!(
                "  torch {version} (CUDA {}) available: {}",
                torch.cuda_build.as_deref().unwrap_or("none"),
                torch.available.map_or("?".into(), |a| a.to_string())
            );
        }
    }
    say!("");
    if report.findings.is_empty() {
        say!("{}", lang.pick("没有发现问题。", "No problems found."));
    }
    for finding in &report.findings {
        print_finding(finding, lang);
    }
}

pub(crate) fn print_finding(finding: &Finding, lang: Lang) {
    let severity = match finding.severity {
        Severity::Error => lang.pick("错误", "ERROR"),
        Severity::Warning => lang.pick("警告", "WARNING"),
        Severity::Info => lang.pick("提示", "INFO"),
    };
    say!("[{severity}] {} ({})", finding.title, finding.code);
    say!("  {}", finding.detail);
    for (n, step) in finding.fix.iter().enumerate() {
        say!("  {}. {}", n + 1, step.text);
        if let Some(command) = &step.command {
            say!("       $ {command}");
        }
    }
    for line in &finding.evidence {
        say!("  · {line}");
    }
    say!("");
}
