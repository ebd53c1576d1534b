//! Recipes on an instance: start one, follow its job, stop or re-read jobs, check the server one
//! left running, open a terminal beside it.

use std::collections::BTreeMap;

use super::ActionError;
use crate::connect::TerminalOutput;
use crate::diagnose::Lang;
use crate::install::serve::ServeCheck;
use crate::install::{self, JobLog};
use crate::job::record::{self, JobRecord};
use crate::job::{CancelReport, JobStatus};
use crate::update::Activity;

use super::Context;

/// Start `recipe` with `options` on `instance`; returns at once with the running job.
pub async fn start(
    context: &Context<'_>,
    instance: &str,
    recipe: &str,
    options: BTreeMap<String, String>,
) -> Result<JobStatus, ActionError> {
    let target = context.live_target(instance).await?;
    Ok(install::start_on_instance(
        context.store,
        &target,
        instance,
        recipe,
        options,
        context.now(),
    )
    .await?)
}

/// Stream job `id`'s log from byte `from` until it ends, reconnecting by itself after a drop;
/// an update waits while it is followed.
pub async fn follow(
    context: &Context<'_>,
    instance: &str,
    id: &str,
    from: u64,
    on_log: &mut (dyn FnMut(JobLog) + Send),
) -> Result<JobStatus, ActionError> {
    let target = context.live_target(instance).await?;
    // An update waits while a recipe is followed (`update::gate`).
    let _running = context.running_work.begin(Activity::InstallFollow);
    Ok(install::follow_recorded(
        context.store,
        target.as_ref(),
        id,
        from,
        on_log,
        context.clock,
    )
    .await?)
}

/// A login shell on the instance, its output sent to `sink`; the terminal's id for writes and
/// resizes.
pub async fn open_terminal(
    context: &Context<'_>,
    instance: &str,
    cols: u32,
    rows: u32,
    sink: impl Fn(TerminalOutput) + Send + 'static,
) -> Result<u64, ActionError> {
    let target = context.live_target(instance).await?;
    Ok(context
        .live
        .terminals
        .open(&target, cols, rows, sink)
        .await?)
}

/// Stop job `id`'s whole process group on `instance`.
pub async fn cancel_job(
    context: &Context<'_>,
    instance: &str,
    id: &str,
) -> Result<CancelReport, ActionError> {
    let target = context.live_target(instance).await?;
    Ok(record::cancel_recorded(context.store, target.as_ref(), id, context.clock).await?)
}

/// The jobs of `instance`, the running ones read again from the instance (after an app restart
/// or a reconnect).
pub async fn refresh_jobs(
    context: &Context<'_>,
    instance: &str,
) -> Result<Vec<JobRecord>, ActionError> {
    let target = context.live_target(instance).await?;
    let refresh = record::refresh_running(context.store, target.as_ref(), instance, context.clock);
    Ok(refresh.await?)
}

/// Check the server a finished server recipe (Ollama, vLLM, TGI) left running on `instance`,
/// through a port forward: one answer, its speed, and whether a model spills onto the CPU.
pub async fn check_server(
    context: &Context<'_>,
    instance: &str,
    id: &str,
    lang: Lang,
) -> Result<ServeCheck, ActionError> {
    let target = context.live_target(instance).await?;
    Ok(install::serve::check_recorded(context.store, &target, id, lang).await?)
}
