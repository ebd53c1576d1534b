//! `ssh-parse`, `exec`, `copy`, `forward`: the SSH engine from the command line, behaving like
//! OpenSSH where scripts depend on it (exit 255 when the connection fails and nothing ran).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use leasehold_core::ssh::{
    parse_ssh_command, ConnectRequest, CopyPath, Secret, SshError, SshTarget, TransferOptions,
    TransferProgress,
};
use leasehold_core::target::{CommandSpec, OutputStream};
use leasehold_core::Coded;

use crate::output;

/// OpenSSH's exit status when the connection (not the remote command) failed.
const EXIT_SSH_FAILED: u8 = 255;

/// How to reach the instance; shared by `exec`, `copy` and `forward`.
#[derive(clap::Args, Debug)]
pub struct SshArgs {
    /// The provider's SSH command, e.g. "ssh -p 12345 root@region-1.autodl.com", or a
    /// ~/.ssh/config alias ("ssh gpu").
    #[arg(long = "ssh", value_name = "COMMAND")]
    ssh: String,
    /// Private key file (repeatable); tried before the command's and ~/.ssh's keys.
    #[arg(short = 'i', value_name = "KEY")]
    identity: Vec<PathBuf>,
    /// Use only this known_hosts file (default: Leasehold's own plus ~/.ssh/known_hosts).
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
}

impl SshArgs {
    pub(crate) fn request(&self) -> Result<ConnectRequest, ExitCode> {
        let password = match &self.password_env {
            Some(var) => match std::env::var(var) {
                Ok(value) => Some(Secret::new(value)),
                Err(_) => {
                    return Err(output::bad_input(format!(
                        "--password-env {var}: that environment variable is not set"
                    )))
                }
            },
            None => None,
        };
        Ok(ConnectRequest {
            ssh_command: self.ssh.clone(),
            identity_files: self.identity.clone(),
            known_hosts: self.known_hosts.clone(),
            accept_new_host_key: self.accept_new_host_key,
            password,
            connect_timeout: Some(Duration::from_secs(self.connect_timeout)),
            boot_wait: Duration::ZERO,
        })
    }
}

/// Exit code for an SSH error: 2 for the caller's mistakes, 255 (like OpenSSH) otherwise.
pub(crate) fn fail_ssh(err: &SshError) -> ExitCode {
    esay!("leasehold: {err} [{}]", err.code());
    ExitCode::from(if err.is_bad_input() {
        output::EXIT_BAD_INPUT
    } else {
        EXIT_SSH_FAILED
    })
}

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|err| panic!("cannot start the async runtime: {err}"))
}

pub(crate) async fn connect(args: &SshArgs) -> Result<SshTarget, ExitCode> {
    let request = args.request()?;
    request.connect().await.map_err(|err| fail_ssh(&err))
}

/// `leasehold ssh-parse "ssh …" [--json]`
pub fn ssh_parse(command: &str, json: bool) -> ExitCode {
    match parse_ssh_command(command) {
        Ok(parsed) => {
            let summary = parsed.summary();
            if json {
                return output::print_json(&summary);
            }
            say!("host: {}", summary.host);
            say!("port: {}", summary.port);
            say!("user: {}", summary.user.as_deref().unwrap_or("(default)"));
            if let Some(key) = &summary.identity_file {
                say!("identity_file: {key}");
            }
            if !summary.jump.is_empty() {
                say!("jump: {}", summary.jump.join(", "));
            }
            if !summary.ignored.is_empty() {
                say!("ignored: {}", summary.ignored.join(" | "));
            }
            ExitCode::SUCCESS
        }
        Err(err) => output::fail(&err),
    }
}

/// `leasehold exec --ssh "…" -- COMMAND…`
pub fn exec(args: &SshArgs, command: &[String], timeout: Option<u64>) -> ExitCode {
    let runtime = runtime();
    let code = runtime.block_on(async {
        let target = match connect(args).await {
            Ok(target) => target,
            Err(code) => return code,
        };
        // Like ssh: the words are joined with spaces and the remote shell interprets them.
        let script = leasehold_core::shell::unix_newlines(&command.join(" ")).into_owned();
        let spec = CommandSpec::new(script)
            .timeout(Duration::from_secs(timeout.unwrap_or(10 * 365 * 24 * 3600)));
        let stdin: Option<Box<dyn tokio::io::AsyncRead + Send + Unpin>> =
            if std::io::stdin().is_terminal() {
                None
            } else {
                Some(Box::new(tokio::io::stdin()))
            };
        let mut sink = |stream: OutputStream, chunk: &[u8]| {
            // A closed pipe on our side (e.g. `| head`) is not the remote command's failure.
            let _ = match stream {
                OutputStream::Stdout => {
                    let mut out = std::io::stdout().lock();
                    out.write_all(chunk).and_then(|()| out.flush())
                }
                OutputStream::Stderr => {
                    let mut err = std::io::stderr().lock();
                    err.write_all(chunk).and_then(|()| err.flush())
                }
            };
        };
        match target.exec_streaming(&spec, stdin, &mut sink).await {
            Ok(report) => match (report.status, report.signal) {
                (Some(status), _) => ExitCode::from(u8::try_from(status).unwrap_or(u8::MAX)),
                (None, signal) => {
                    esay!(
                        "leasehold: the remote command was killed{}",
                        signal
                            .map(|s| format!(" by signal {s}"))
                            .unwrap_or_default()
                    );
                    ExitCode::from(EXIT_SSH_FAILED)
                }
            },
            Err(err) => fail_ssh(&err),
        }
    });
    // stdin is read on a blocking thread that may never see EOF; do not wait for it.
    runtime.shutdown_background();
    code
}

/// `leasehold copy --ssh "…" SRC DST`
pub fn copy(args: &SshArgs, source: &str, destination: &str, json: bool) -> ExitCode {
    let (from, to) = (CopyPath::parse(source), CopyPath::parse(destination));
    if matches!(
        (&from, &to),
        (CopyPath::Local(_), CopyPath::Local(_)) | (CopyPath::Remote(_), CopyPath::Remote(_))
    ) {
        return output::bad_input(
            "exactly one of SRC and DST must be on the instance, written :path (e.g. :/root/data)",
        );
    }
    let runtime = runtime();
    runtime.block_on(async {
        let target = match connect(args).await {
            Ok(target) => target,
            Err(code) => return code,
        };
        let interactive = std::io::stderr().is_terminal();
        let print = |p: &TransferProgress| print_progress(p, interactive);
        match target
            .copy(&from, &to, TransferOptions::default(), &print)
            .await
        {
            Ok(report) => {
                if interactive {
                    eprintln!();
                }
                esay!(
                    "copied {} file(s), {:.1} MB in {:.1} s ({:.1} MB/s){}{}",
                    report.files,
                    report.bytes as f64 / 1e6,
                    report.seconds,
                    report.throughput_bytes_per_second() / 1e6,
                    if report.resumed_bytes > 0 {
                        format!(
                            ", resumed after {:.1} MB",
                            report.resumed_bytes as f64 / 1e6
                        )
                    } else {
                        String::new()
                    },
                    if report.verified {
                        ", SHA-256 verified"
                    } else {
                        ""
                    }
                );
                if json {
                    output::print_json(&report)
                } else {
                    ExitCode::SUCCESS
                }
            }
            Err(err) if err.is_connection_failure() => fail_ssh(&err),
            Err(err) => output::fail(&err),
        }
    })
}

fn print_progress(progress: &TransferProgress, interactive: bool) {
    let percent = if progress.bytes_total > 0 {
        progress.bytes_done as f64 * 100.0 / progress.bytes_total as f64
    } else {
        100.0
    };
    let line = format!(
        "{:5.1}% {:.1}/{:.1} MB  file {}/{}  {}",
        percent,
        progress.bytes_done as f64 / 1e6,
        progress.bytes_total as f64 / 1e6,
        (progress.files_done + 1).min(progress.files_total),
        progress.files_total,
        progress.current
    );
    crate::output::progress_line(&line, interactive);
}

/// `leasehold forward --ssh "…" LOCAL_PORT:REMOTE_PORT`
pub fn forward(args: &SshArgs, spec: &str) -> ExitCode {
    let Some((local_port, remote_host, remote_port)) = parse_forward_spec(spec) else {
        return output::bad_input(format!(
            "`{spec}` is not LOCAL_PORT:REMOTE_PORT (e.g. 8888:8888)"
        ));
    };
    let runtime = runtime();
    runtime.block_on(async {
        let target = match connect(args).await {
            Ok(target) => std::sync::Arc::new(target),
            Err(code) => return code,
        };
        match target
            .forward_local(local_port, &remote_host, remote_port)
            .await
        {
            Ok(info) => {
                say!("{}", info.url);
                let _ = std::io::stdout().flush();
                esay!(
                    "forwarding 127.0.0.1:{} -> {}:{} on the instance; Ctrl-C to stop",
                    info.local_port,
                    info.remote_host,
                    info.remote_port
                );
                let _ = tokio::signal::ctrl_c().await;
                ExitCode::SUCCESS
            }
            Err(err) => output::fail(&err),
        }
    })
}

/// `L:R` or `L:HOST:R`.
fn parse_forward_spec(spec: &str) -> Option<(u16, String, u16)> {
    let parts: Vec<&str> = spec.split(':').collect();
    let port = |text: &str| text.parse::<u16>().ok();
    match parts.as_slice() {
        [local, remote] => Some((port(local)?, "127.0.0.1".to_owned(), port(remote)?)),
        [local, host, remote] if !host.is_empty() => {
            Some((port(local)?, (*host).to_owned(), port(remote)?))
        }
        _ => None,
    }
    .filter(|(_, _, remote)| *remote > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forward_specs_accept_two_or_three_parts() {
        assert_eq!(
            parse_forward_spec("8888:8888"),
            Some((8888, "127.0.0.1".into(), 8888))
        );
        assert_eq!(
            parse_forward_spec("0:localhost:6006"),
            Some((0, "localhost".into(), 6006))
        );
        assert_eq!(parse_forward_spec("8888"), None);
        assert_eq!(parse_forward_spec("a:1"), None);
        assert_eq!(parse_forward_spec("1:0"), None);
    }
}
