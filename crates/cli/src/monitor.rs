//! `leasehold monitor`: the live GPU monitor on an instance (`--ssh`) or this computer
//! (`--local`): one line per sample, until `--count` samples or Ctrl-C. With `--json` each line
//! is one JSON object (the contract in the Work issue); findings come with every line.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use leasehold_core::diagnose::{Lang, Severity};
use leasehold_core::monitor::{
    self, local, FindingContext, LiveFinding, MonitorError, MonitorEvent, Sample, SamplerOptions,
};
use leasehold_core::ssh::{ConnectRequest, Secret};
use serde::Serialize;

use crate::output;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("where").required(true).args(["ssh", "local"])))]
pub struct MonitorArgs {
    /// The provider's SSH command, e.g. "ssh -p 12345 root@region-1.autodl.com".
    #[arg(long, value_name = "COMMAND")]
    ssh: Option<String>,
    /// Monitor this computer's GPUs (NVML) instead of an instance.
    #[arg(long)]
    local: bool,
    /// Private key file (repeatable).
    #[arg(short = 'i', long = "identity", value_name = "KEY")]
    identity: Vec<PathBuf>,
    /// Use only this known_hosts file.
    #[arg(long, value_name = "FILE")]
    known_hosts: Option<PathBuf>,
    /// Trust and record a host key seen for the first time (never a changed one).
    #[arg(long)]
    accept_new_host_key: bool,
    /// Read the login password from this environment variable.
    #[arg(long, value_name = "VAR")]
    password_env: Option<String>,
    /// Seconds to wait for the TCP connection and SSH handshake.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    connect_timeout: u64,
    /// Time between samples: 500ms, 1s, 2s … (at least 100ms).
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    interval: String,
    /// Stop after this many samples (default: until Ctrl-C).
    #[arg(long, value_name = "N")]
    count: Option<String>,
    /// Language of the findings in text output: zh-CN or en (default from LANG).
    #[arg(long)]
    lang: Option<String>,
    #[arg(long)]
    json: bool,
}

/// One `--json` line.
#[derive(Serialize)]
struct Line<'a> {
    at: chrono::DateTime<chrono::Utc>,
    gpus: Vec<GpuLine>,
    findings: Vec<FindingLine<'a>>,
}

#[derive(Serialize)]
struct GpuLine {
    index: u32,
    utilization_pct: Option<u32>,
    memory_used_mib: Option<u64>,
    memory_total_mib: Option<u64>,
    temperature_c: Option<u32>,
    power_draw_w: Option<f64>,
}

#[derive(Serialize)]
struct FindingLine<'a> {
    code: &'a str,
    severity: Severity,
    gpus: &'a [u32],
}

fn parse_interval(text: &str) -> Result<Duration, String> {
    let interval = humantime::parse_duration(text.trim())
        .map_err(|err| format!("--interval {text}: {err} (use e.g. 500ms, 1s, 2s)"))?;
    if interval < monitor::MIN_INTERVAL {
        return Err(format!(
            "--interval {text}: at least {}ms between samples",
            monitor::MIN_INTERVAL.as_millis()
        ));
    }
    Ok(interval)
}

fn parse_count(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "--count {text}: a whole number of samples, 1 or more"
        )),
    }
}

pub fn run(args: &MonitorArgs) -> ExitCode {
    let interval = match parse_interval(&args.interval) {
        Ok(interval) => interval,
        Err(message) => return output::bad_input(message),
    };
    let count = match args.count.as_deref().map(parse_count).transpose() {
        Ok(count) => count,
        Err(message) => return output::bad_input(message),
    };
    let lang = match &args.lang {
        Some(tag) => match Lang::from_tag(tag) {
            Some(lang) => lang,
            None => return output::bad_input(format!("--lang {tag}: use zh-CN or en")),
        },
        None => Lang::from_locale(std::env::var("LANG").ok().as_deref()),
    };
    let password = match &args.password_env {
        Some(var) => match std::env::var(var) {
            Ok(value) => Some(Secret::new(value)),
            Err(_) => {
                return output::bad_input(format!(
                    "--password-env {var}: that environment variable is not set"
                ))
            }
        },
        None => None,
    };
    let options = match SamplerOptions::new(interval) {
        Ok(options) => options,
        Err(err) => return output::fail(&err),
    };
    let context = FindingContext {
        lang,
        // A rented instance bills by the hour; this computer does not.
        billing: args.ssh.is_some(),
    };
    let runtime = crate::ssh::runtime();
    let mut printer = Printer {
        json: args.json,
        lang,
        findings: Vec::new(),
        printed: 0,
        count,
    };
    let result: Result<(), MonitorError> = runtime.block_on(async {
        let work = async {
            match &args.ssh {
                Some(command) => {
                    let request = ConnectRequest {
                        ssh_command: command.clone(),
                        identity_files: args.identity.clone(),
                        known_hosts: args.known_hosts.clone(),
                        accept_new_host_key: args.accept_new_host_key,
                        password,
                        connect_timeout: Some(Duration::from_secs(args.connect_timeout)),
                        boot_wait: Duration::ZERO,
                    };
                    let target = request.connect().await?;
                    let mut sink = |event| printer.on_event(event);
                    let sampled = monitor::run(
                        &target,
                        &crate::ledger::CLOCK,
                        &options,
                        &context,
                        &mut sink,
                    )
                    .await;
                    target.disconnect().await;
                    sampled
                }
                None => {
                    let mut sink = |event| printer.on_event(event);
                    local::run_local(&crate::ledger::CLOCK, &options, &context, &mut sink).await
                }
            }
        };
        tokio::select! {
            result = work => result,
            _ = tokio::signal::ctrl_c() => Ok(()),
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(MonitorError::NoLocalDriver { reason }) => {
            esay!(
                "{}",
                lang.pick(
                    format!("这台电脑上没有可用的 NVIDIA 驱动（{reason}），没有可监控的 GPU。"),
                    format!("No usable NVIDIA driver on this computer ({reason}), so there is no GPU to monitor."),
                )
            );
            ExitCode::from(output::EXIT_FAILURE)
        }
        Err(err) => output::fail(&err),
    }
}

struct Printer {
    json: bool,
    lang: Lang,
    findings: Vec<LiveFinding>,
    printed: u64,
    count: Option<u64>,
}

impl Printer {
    fn on_event(&mut self, event: MonitorEvent) -> ControlFlow<()> {
        match event {
            MonitorEvent::Findings { findings, .. } => {
                if !self.json {
                    for finding in &findings {
                        crate::verify::print_finding(&finding.finding, self.lang);
                    }
                }
                self.findings = findings;
            }
            MonitorEvent::Sample(sample) => {
                self.print(&sample);
                self.printed += 1;
                if self.count.is_some_and(|n| self.printed >= n) {
                    return ControlFlow::Break(());
                }
            }
            MonitorEvent::Gap { at, reason, .. } => {
                esay!(
                    "{} gap: the GPU stream stopped ({reason:?}); restarting",
                    at.to_rfc3339()
                );
            }
            MonitorEvent::Processes(_) => {}
        }
        ControlFlow::Continue(())
    }

    fn print(&self, sample: &Sample) {
        if self.json {
            let line = Line {
                at: sample.at,
                gpus: sample
                    .gpus
                    .iter()
                    .map(|g| GpuLine {
                        index: g.index,
                        utilization_pct: g.utilization_pct,
                        memory_used_mib: g.memory_used_mib,
                        memory_total_mib: g.memory_total_mib,
                        temperature_c: g.temperature_c,
                        power_draw_w: g.power_draw_w,
                    })
                    .collect(),
                findings: self
                    .findings
                    .iter()
                    .map(|f| FindingLine {
                        code: &f.finding.code,
                        severity: f.finding.severity,
                        gpus: &f.gpus,
                    })
                    .collect(),
            };
            match serde_json::to_string(&line) {
                Ok(text) => say!("{text}"),
                Err(err) => esay!("error: could not encode a sample: {err}"),
            }
            return;
        }
        let dash = || "-".to_owned();
        let gpus: Vec<String> = sample
            .gpus
            .iter()
            .map(|g| {
                format!(
                    "GPU{} {}% {}/{} MiB {}°C {} W",
                    g.index,
                    g.utilization_pct.map_or_else(dash, |v| v.to_string()),
                    g.memory_used_mib.map_or_else(dash, |v| v.to_string()),
                    g.memory_total_mib.map_or_else(dash, |v| v.to_string()),
                    g.temperature_c.map_or_else(dash, |v| v.to_string()),
                    g.power_draw_w.map_or_else(dash, |v| format!("{v:.0}")),
                )
            })
            .collect();
        say!("{}  {}", sample.at.format("%H:%M:%S"), gpus.join(" | "));
    }
}
