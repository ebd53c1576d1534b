//! Back up and check before release: what would be lost, saving it (copies, `git push`, the
//! provider's file storage), and the release checklist.

use std::path::PathBuf;

use crate::backup::{
    self, AtRiskReport, BackupError, BackupProgress, BackupRecord, RunRequest, ScanOptions,
};
use crate::error::Coded;

use super::ActionError;
use crate::release::{self, CheckOutcome};
use crate::ssh::ConnectRequest;
use crate::update::Activity;

use super::Context;

/// How a use case reaches the instance: the app's live connection (dialling the saved target
/// when none is open), or a connection the user described (the CLI's `--ssh`).
#[derive(Clone, Copy)]
pub enum Reach<'a> {
    Live,
    Dial(&'a ConnectRequest),
}

/// Backups share the stoppable runs, under their own key per instance.
pub fn run_key(instance: &str) -> String {
    format!("backup:{instance}")
}

/// What on `instance` would be lost (default roots when `roots` is empty), recorded.
pub async fn scan(
    context: &Context<'_>,
    instance: &str,
    roots: Vec<String>,
) -> Result<AtRiskReport, ActionError> {
    let target = context.live_target(instance).await?;
    let options = ScanOptions {
        roots,
        path_prefix: None,
    };
    Ok(backup::scan_recorded(
        context.store,
        target.as_ref(),
        Some(instance),
        &options,
        context.now(),
    )
    .await?)
}

/// What to save from an instance: remote paths into a local folder, and the environment's
/// description beside them.
pub struct BackupChoice {
    pub paths: Vec<String>,
    pub local_dir: PathBuf,
    pub export_environment: bool,
}

/// Copy the chosen paths from `instance` (and export its environment), reporting progress;
/// each part recorded when done. Stoppable with [`cancel`]; an update waits for it.
pub async fn run(
    context: &Context<'_>,
    instance: &str,
    choice: BackupChoice,
    progress: &(dyn Fn(&BackupProgress) + Send + Sync),
) -> Result<Vec<BackupRecord>, ActionError> {
    let target = context.live_target(instance).await?;
    // An update waits until the backup ends (`update::gate`).
    let _running = context.running_work.begin(Activity::Backup);
    let work = async {
        let mut records = Vec::new();
        if !choice.paths.is_empty() {
            let request = RunRequest {
                remote_paths: choice.paths,
                local_dir: choice.local_dir.clone(),
                instance: Some(instance.to_owned()),
            };
            records.push(
                backup::run(context.store, &target, &request, progress, context.clock).await?,
            );
        }
        if choice.export_environment {
            records.push(
                backup::export_environment(
                    context.store,
                    &target,
                    Some(instance),
                    &choice.local_dir,
                    context.clock,
                )
                .await?,
            );
        }
        Ok::<_, BackupError>(records)
    };
    match Box::pin(context.checks.run(&run_key(instance), work)).await {
        Some(result) => Ok(result?),
        None => Err(BackupError::Cancelled.into()),
    }
}

/// Stop the backup running for `instance`: what was copied stays, and running it again resumes.
pub fn cancel(context: &Context<'_>, instance: &str) {
    context.checks.cancel(&run_key(instance));
}

/// Run the release checklist on `instance` and record it. An instance that cannot be reached
/// (never connected, powered off, gone) still gets its checklist: what only a look could tell
/// is blocked until overridden with a reason. A connection described wrongly is bad input, not
/// an unreachable instance.
pub async fn release_check(
    context: &Context<'_>,
    instance: &str,
    options: &ScanOptions,
    reach: Reach<'_>,
) -> Result<CheckOutcome, ActionError> {
    let reached = match reach {
        Reach::Live => context.live_target(instance).await,
        Reach::Dial(request) => {
            // An unknown name is bad input before any connection is made.
            release::latest_check(context.store, instance).await?;
            match request.connect().await {
                Ok(target) => Ok(std::sync::Arc::new(target)),
                Err(err) if err.is_bad_input() => return Err(err.into()),
                Err(err) => Err(err.into()),
            }
        }
    };
    let target = match reached {
        Ok(target) => target,
        Err(unreached) => {
            return Ok(release::check_unreached(
                context.store,
                instance,
                &unreached.to_string(),
                context.now(),
            )
            .await?)
        }
    };
    Ok(release::check(
        context.store,
        target.as_ref(),
        instance,
        options,
        context.now(),
    )
    .await?)
}

/// `git push` in repository `repo` on `instance`; the record keeps its output.
pub async fn git_push(
    context: &Context<'_>,
    instance: &str,
    repo: &str,
) -> Result<BackupRecord, ActionError> {
    let target = context.live_target(instance).await?;
    let push = backup::git_push(context.store, &target, Some(instance), repo, context.clock);
    Ok(push.await?)
}

/// Copy `path` into the provider's file storage on `instance` (AutoDL's autodl-fs).
pub async fn to_file_storage(
    context: &Context<'_>,
    instance: &str,
    path: &str,
) -> Result<BackupRecord, ActionError> {
    let target = context.live_target(instance).await?;
    let copy = backup::copy_to_instance_file_storage(
        context.store,
        &target,
        instance,
        path,
        context.clock,
    );
    Ok(copy.await?)
}
