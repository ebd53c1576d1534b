//! `leasehold job start|attach|status|cancel|list`: detached remote jobs. `start` records how it
//! reached the instance; the others connect the same way (a password again through
//! `--password-env`, or the keychain).

use leasehold_core::Clock;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use leasehold_core::job::record::{self, JobRecord, NewJob};
use leasehold_core::job::{self, JobError, JobId, JobRoot, JobState, JobStatus};
use leasehold_core::printable::printable_log;
use leasehold_core::ssh::{Secret, SshTarget};
use leasehold_core::store::Store;

use crate::output;
use crate::ssh::{fail_ssh, runtime, SshArgs};

/// Exit code of `job attach` when the user detached with Ctrl-C (the job goes on).
pub const EXIT_DETACHED: u8 = 130;
/// Exit code of `job attach` for a cancelled job (as if ended by SIGTERM).
pub const EXIT_CANCELLED: u8 = 143;

#[derive(clap::Subcommand)]
pub enum JobCommand {
    /// Start a command on the instance that keeps running when the link drops; prints its id.
    Start {
        #[command(flatten)]
        ssh: SshArgs,
        /// A name to recognise the job by in lists.
        #[arg(long)]
        name: Option<String>,
        /// Keep the job under this recorded instance (see `leasehold instance add`).
        #[arg(long)]
        instance: Option<String>,
        #[arg(long)]
        json: bool,
        /// The command (after `--`); its words are joined with spaces for the remote shell.
        #[arg(required = true, last = true)]
        command: Vec<String>,
    },
    /// Print the job's log from the start (or byte N) until it ends; exit code = the job's.
    /// A dropped link reconnects and continues; Ctrl-C detaches and the job goes on.
    Attach {
        id: String,
        #[arg(long, value_name = "N")]
        from_byte: Option<u64>,
        /// Read the login password from this environment variable.
        #[arg(long, value_name = "VAR")]
        password_env: Option<String>,
    },
    /// The job's state, exit code and log size, read from the instance.
    Status {
        id: String,
        #[arg(long)]
        json: bool,
        #[arg(long, value_name = "VAR")]
        password_env: Option<String>,
    },
    /// Stop the job's whole process group; says what was left behind.
    Cancel {
        id: String,
        #[arg(long)]
        json: bool,
        #[arg(long, value_name = "VAR")]
        password_env: Option<String>,
    },
    /// The jobs recorded here, oldest first (no connection).
    List {
        #[arg(long)]
        json: bool,
    },
}

pub fn run(db: &Path, command: &JobCommand) -> ExitCode {
    let runtime = runtime();
    runtime.block_on(async {
        let store = match Store::open(db).await {
            Ok(store) => store,
            Err(err) => return output::fail(&err),
        };
        let code = match command {
            JobCommand::Start {
                ssh,
                name,
                instance,
                json,
                command,
            } => {
                start(
                    &store,
                    ssh,
                    name.as_deref(),
                    instance.as_deref(),
                    *json,
                    &leasehold_core::job::user_command_script(command),
                )
                .await
            }
            JobCommand::Attach {
                id,
                from_byte,
                password_env,
            } => attach(&store, id, *from_byte, password_env.as_deref()).await,
            JobCommand::Status {
                id,
                json,
                password_env,
            } => status(&store, id, *json, password_env.as_deref()).await,
            JobCommand::Cancel {
                id,
                json,
                password_env,
            } => cancel(&store, id, *json, password_env.as_deref()).await,
            JobCommand::List { json } => list(&store, *json).await,
        };
        store.close().await;
        code
    })
}

async fn start(
    store: &Store,
    ssh: &SshArgs,
    name: Option<&str>,
    instance: Option<&str>,
    json: bool,
    script: &str,
) -> ExitCode {
    let request = match ssh.request() {
        Ok(request) => request,
        Err(code) => return code,
    };
    if let Some(name) = instance {
        if let Err(err) = record::check_instance(store, name).await {
            return output::fail(&err);
        }
    }
    let target = match request.connect().await {
        Ok(target) => target,
        Err(err) => return fail_ssh(&err),
    };
    let now = crate::ledger::CLOCK.now();
    let id = JobId::generate(now);
    let options = std::collections::BTreeMap::new();
    let label = target.destination().label();
    let new = NewJob {
        id: &id,
        instance,
        target: &label,
        request: &request,
        name,
        recipe: None,
        options: &options,
        script,
        now,
    };
    let started = record::start_recorded(store, &target, &JobRoot::Home, &new).await;
    target.disconnect().await;
    match started {
        Ok(status) if json => output::print_json(&serde_json::json!({
            "id": status.id,
            "state": status.state,
        })),
        Ok(status) => {
            say!("{}", status.id);
            ExitCode::SUCCESS
        }
        Err(err) => output::fail(&err),
    }
}

/// The recorded job and a connection made the way it was started.
pub(crate) async fn reconnect(
    store: &Store,
    id: &str,
    password_env: Option<&str>,
) -> Result<(JobRecord, JobId, SshTarget), ExitCode> {
    let job = record::load(store, id)
        .await
        .map_err(|err| output::fail(&err))?;
    let job_id = job.job_id().map_err(|err| output::fail(&err))?;
    let password = match password_env {
        Some(var) => Some(Secret::new(std::env::var(var).map_err(|_| {
            output::bad_input(format!(
                "--password-env {var}: that environment variable is not set"
            ))
        })?)),
        None => None,
    };
    let target = job
        .connect_request(password)
        .connect()
        .await
        .map_err(|err| fail_ssh(&err))?;
    Ok((job, job_id, target))
}

async fn save(store: &Store, status: &JobStatus) {
    if let Err(err) = record::save_status(store, status, crate::ledger::CLOCK.now()).await {
        esay!("warning: the job's state was not saved: {err}");
    }
}

/// Stream the log to stdout until the job ends (exit code = the job's) or Ctrl-C (detach).
pub(crate) async fn attach_to(
    store: &Store,
    target: &SshTarget,
    job_id: &str,
    mut offset: u64,
    mut on_chunk: impl FnMut(&[u8]) + Send,
) -> Result<JobStatus, ExitCode> {
    // The log is the instance's text: whole characters, without escape sequences.
    let mut text = job::Utf8Chunks::default();
    let mut sink = |chunk: &[u8]| {
        let piece = text.push(chunk);
        let mut out = std::io::stdout().lock();
        let _ = out
            .write_all(printable_log(&piece).as_bytes())
            .and_then(|()| out.flush());
        on_chunk(chunk);
    };
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let mut on_link = |state: job::LinkChange| match state {
        job::LinkChange::Lost => esay!("connection lost — the job goes on; reconnecting…"),
        job::LinkChange::Back => esay!("connection back; the log continues"),
    };
    let outcome = record::attach_recorded_until(
        store,
        target,
        job_id,
        &mut offset,
        &mut sink,
        &mut on_link,
        &crate::ledger::CLOCK,
        ctrl_c,
    )
    .await;
    match outcome {
        Ok(None) => {
            esay!("detached at byte {offset}; the job goes on (leasehold job attach {job_id} --from-byte {offset})");
            Err(ExitCode::from(EXIT_DETACHED))
        }
        Ok(Some(status)) => Ok(status),
        Err(err) => Err(output::fail(&err)),
    }
}

/// The exit code `job attach` and `install` end with.
pub(crate) fn exit_for(status: &JobStatus) -> ExitCode {
    match status.state {
        JobState::Succeeded => ExitCode::SUCCESS,
        JobState::Failed => ExitCode::from(
            status
                .exit_code
                .and_then(|c| u8::try_from(c).ok())
                .filter(|c| *c != 0)
                .unwrap_or(1),
        ),
        JobState::Cancelled => {
            esay!("the job was cancelled");
            ExitCode::from(EXIT_CANCELLED)
        }
        JobState::Lost => {
            esay!("the job was lost: the instance restarted or its folder vanished before it wrote an exit code");
            ExitCode::from(output::EXIT_FAILURE)
        }
        JobState::Running => ExitCode::from(output::EXIT_FAILURE),
    }
}

async fn attach(
    store: &Store,
    id: &str,
    from_byte: Option<u64>,
    password_env: Option<&str>,
) -> ExitCode {
    let (_, job_id, target) = match reconnect(store, id, password_env).await {
        Ok(found) => found,
        Err(code) => return code,
    };
    let result = attach_to(
        store,
        &target,
        job_id.as_str(),
        from_byte.unwrap_or(0),
        |_| {},
    )
    .await;
    target.disconnect().await;
    match result {
        Ok(status) => exit_for(&status),
        Err(code) => code,
    }
}

async fn status(store: &Store, id: &str, json: bool, password_env: Option<&str>) -> ExitCode {
    let (_, job_id, target) = match reconnect(store, id, password_env).await {
        Ok(found) => found,
        Err(code) => return code,
    };
    let result = job::status(&target, &JobRoot::Home, &job_id).await;
    target.disconnect().await;
    match result {
        Ok(status) => {
            save(store, &status).await;
            if json {
                return output::print_json(&status);
            }
            say!(
                "{}  {}{}  log {} bytes",
                status.id,
                status.state.as_str(),
                status
                    .exit_code
                    .map(|c| format!(" (exit {c})"))
                    .unwrap_or_default(),
                status.log_bytes
            );
            ExitCode::SUCCESS
        }
        Err(err) => output::fail(&err),
    }
}

async fn cancel(store: &Store, id: &str, json: bool, password_env: Option<&str>) -> ExitCode {
    let (_, job_id, target) = match reconnect(store, id, password_env).await {
        Ok(found) => found,
        Err(code) => return code,
    };
    let result = record::cancel_recorded(store, &target, id, &crate::ledger::CLOCK).await;
    target.disconnect().await;
    match result {
        Ok(report) => {
            if json {
                return output::print_json(&report);
            }
            if report.already_over {
                say!(
                    "{} had already ended ({}); nothing was stopped",
                    report.status.id,
                    report.status.state.as_str()
                );
            } else {
                say!(
                    "{} cancelled{}",
                    report.status.id,
                    if report.killed {
                        " (it ignored the request to stop and was killed)"
                    } else {
                        ""
                    }
                );
            }
            if report.left_behind.is_empty() {
                say!("no process of the job is left");
            } else {
                say!("still running:");
                for process in &report.left_behind {
                    say!("  {process}");
                }
            }
            if report.folder_kept {
                say!("its script and log stay in ~/.leasehold/jobs/{job_id}/ on the instance");
            }
            ExitCode::SUCCESS
        }
        Err(err) => output::fail(&err),
    }
}

async fn list(store: &Store, json: bool) -> ExitCode {
    let jobs = match record::list(store).await {
        Ok(jobs) => jobs,
        Err(err) => return output::fail::<JobError>(&err),
    };
    if json {
        return output::print_json(&jobs);
    }
    if jobs.is_empty() {
        say!("no jobs recorded");
    }
    for job in &jobs {
        say!(
            "{}  {:<9} {:<5} {}  {}  {}",
            job.id,
            job.state.as_str(),
            job.exit_code.map(|c| c.to_string()).unwrap_or_default(),
            job.target,
            job.recipe.as_deref().or(job.name.as_deref()).unwrap_or("-"),
            job.created_at.to_rfc3339()
        );
    }
    ExitCode::SUCCESS
}
