//! `leasehold install`, `install-script` and `export-setup`: recipes run as detached jobs, the
//! same scripts printed without a connection, and a standalone setup script replaying them.

use leasehold_core::Clock;
use std::path::Path;
use std::process::ExitCode;

use leasehold_core::install::{self, progress::Progress, InstallFacts, Recipe, RecipeOptions};
use leasehold_core::job::record;
use leasehold_core::job::JobState;
use leasehold_core::store::Store;

use crate::job::{attach_to, exit_for};
use crate::output;
use crate::ssh::{fail_ssh, runtime, SshArgs};

#[derive(clap::Args)]
pub struct InstallArgs {
    /// mirrors | miniconda | pytorch | pip | ollama | docker | vllm | tgi | per-gpu
    recipe: String,
    #[command(flatten)]
    ssh: SshArgs,
    /// A recipe option (repeatable), e.g. --option env=dl --option python=3.10.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// Return once the job runs (print its id); follow it later with `leasehold job attach`.
    #[arg(long)]
    detach: bool,
    /// Keep the run under this recorded instance (for `export-setup`).
    #[arg(long)]
    instance: Option<String>,
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub struct InstallScriptArgs {
    recipe: String,
    /// A recipe option (repeatable); facts read from the instance when installing over SSH come
    /// as options here (pytorch: --option driver=570.124.06 --option gpu="RTX 4090").
    #[arg(long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
}

/// Recipe and options, checked before anything connects (exit 2 on bad input).
fn parse(recipe: &str, options: &[String]) -> Result<(Recipe, RecipeOptions), ExitCode> {
    let recipe = Recipe::parse(recipe).map_err(|err| output::fail(&err))?;
    let options = RecipeOptions::parse(recipe, options).map_err(|err| output::fail(&err))?;
    Ok((recipe, options))
}

pub fn run_install_script(args: &InstallScriptArgs) -> ExitCode {
    let (recipe, options) = match parse(&args.recipe, &args.options) {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    match install::script(recipe, &options, &InstallFacts::default()) {
        Ok(text) => {
            say!("{}", text.trim_end());
            ExitCode::SUCCESS
        }
        Err(err) => output::fail(&err),
    }
}

pub fn run_install(db: &Path, args: &InstallArgs) -> ExitCode {
    let (recipe, options) = match parse(&args.recipe, &args.options) {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    let request = match args.ssh.request() {
        Ok(request) => request,
        Err(code) => return code,
    };
    runtime().block_on(async {
        let store = match Store::open(db).await {
            Ok(store) => store,
            Err(err) => return output::fail(&err),
        };
        if let Some(name) = &args.instance {
            if let Err(err) = record::check_instance(&store, name).await {
                return output::fail(&err);
            }
        }
        let target = match request.connect().await {
            // Shared: a server recipe's check opens a port forward on it at the end.
            Ok(target) => std::sync::Arc::new(target),
            Err(err) => return fail_ssh(&err),
        };
        let now = crate::ledger::CLOCK.now();
        let started = install::start(
            &store,
            target.as_ref(),
            &request,
            args.instance.as_deref(),
            recipe,
            &options,
            now,
        )
        .await;
        let id = match started {
            Ok(status) => status.id,
            Err(err) => {
                target.disconnect().await;
                return output::fail(&err);
            }
        };
        if args.detach {
            target.disconnect().await;
            store.close().await;
            if args.json {
                return output::print_json(&serde_json::json!({
                    "id": id.as_str(), "state": "running", "recipe": recipe.as_str()
                }));
            }
            say!("{id}");
            return ExitCode::SUCCESS;
        }
        esay!("job {id} started; Ctrl-C detaches (the install goes on)");
        let started = std::time::Instant::now();
        let mut progress = Progress::default();
        let end = attach_to(&store, &target, &id, 0, |chunk| {
            progress.feed(chunk, started.elapsed().as_secs_f64());
        })
        .await;
        let server = match &end {
            Ok(status) if status.state == JobState::Succeeded => {
                check_server(&target, recipe, &options).await
            }
            _ => None,
        };
        target.disconnect().await;
        store.close().await;
        let status = match end {
            Ok(status) => status,
            Err(code) => return code,
        };
        if let Some((code, message)) = &progress.failure {
            esay!("failed: {message} [{code}]");
        }
        for finding in &progress.findings {
            esay!("finding: {finding}");
        }
        if args.json {
            let _ = output::print_json(&serde_json::json!({
                "id": status.id,
                "state": status.state,
                "exit_code": status.exit_code,
                "log_bytes": status.log_bytes,
                "skipped": progress.skipped,
                "results": progress.results,
                "findings": progress.findings,
                "failure": progress.failure.as_ref().map(|(code, message)| serde_json::json!({"code": code, "message": message})),
                "server": server,
            }));
        }
        exit_for(&status)
    })
}

/// A server recipe's check through a port forward, reported on stderr; `None` for other recipes
/// (a failed check is reported and kept as `{"error": …}` in the JSON).
async fn check_server(
    target: &std::sync::Arc<leasehold_core::ssh::SshTarget>,
    recipe: Recipe,
    options: &RecipeOptions,
) -> Option<serde_json::Value> {
    install::serve::server_of(recipe, options)?;
    let lang = leasehold_core::diagnose::Lang::from_locale(std::env::var("LANG").ok().as_deref());
    match install::serve::check_through_forward(target, recipe, options, lang).await {
        Ok(check) => {
            esay!(
                "server answered through a port forward: {}",
                check.answer.trim()
            );
            if let Some(rate) = check.tokens_per_second {
                esay!("{rate} tokens per second");
            }
            for finding in &check.findings {
                esay!("finding: {} [{}]", finding.title, finding.code);
            }
            serde_json::to_value(&check).ok()
        }
        Err(err) => {
            esay!("the server check failed: {err}");
            Some(
                serde_json::json!({"error": {"code": leasehold_core::Coded::code(&err), "message": err.to_string()}}),
            )
        }
    }
}

pub fn run_export_setup(db: &Path, instance: &str) -> ExitCode {
    runtime().block_on(async {
        let store = match Store::open(db).await {
            Ok(store) => store,
            Err(err) => return output::fail(&err),
        };
        let runs = record::succeeded_recipes(&store, instance).await;
        store.close().await;
        match runs {
            Ok(runs) => {
                let runs: Vec<_> = runs
                    .into_iter()
                    .map(|job| (job.recipe.unwrap_or_default(), job.updated_at, job.script))
                    .collect();
                say!("{}", install::export_setup(instance, &runs).trim_end());
                ExitCode::SUCCESS
            }
            Err(err) => output::fail(&err),
        }
    })
}
