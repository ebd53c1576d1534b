//! The watchdog card on the instance page: its settings for this instance, and the watchdog
//! installed, read and removed over the instance's live connection.

use super::{ActionError, Context};
use crate::billing::{ledger, ProviderKey};
use crate::watchdog::{
    self, InstallReport, RemoveReport, WatchdogOptions, WatchdogRequest, WatchdogStatus,
    DEFAULT_STATE_DIR,
};

/// The watchdog settings for `instance`: the defaults, with its provider's power-off command.
pub async fn defaults(
    context: &Context<'_>,
    instance: &str,
) -> Result<WatchdogOptions, ActionError> {
    let detail = ledger::show(context.store, instance, context.now()).await?;
    let provider = ProviderKey::parse(&detail.summary.provider).ok();
    Ok(WatchdogOptions::for_provider(provider))
}

/// Install (or replace) the watchdog on `instance` with `request` over its defaults; settings
/// are checked before anything connects.
pub async fn install(
    context: &Context<'_>,
    instance: &str,
    request: &WatchdogRequest,
) -> Result<InstallReport, ActionError> {
    let options = WatchdogOptions::resolve(request, defaults(context, instance).await?)?;
    let target = context.live_target(instance).await?;
    Ok(watchdog::install(target.as_ref(), &options).await?)
}

/// What the watchdog in `state_dir` (the default folder when `None`) is doing, kept as the
/// instance's last known watchdog state.
pub async fn status(
    context: &Context<'_>,
    instance: &str,
    state_dir: Option<&str>,
) -> Result<WatchdogStatus, ActionError> {
    let target = context.live_target(instance).await?;
    let dir = state_dir.unwrap_or(DEFAULT_STATE_DIR);
    let status =
        watchdog::status_kept(context.store, instance, target.as_ref(), dir, context.now());
    Ok(status.await?)
}

/// Stop the watchdog in `state_dir` (the default folder when `None`) and remove what it put on
/// the instance.
pub async fn remove(
    context: &Context<'_>,
    instance: &str,
    state_dir: Option<&str>,
) -> Result<RemoveReport, ActionError> {
    let target = context.live_target(instance).await?;
    let dir = state_dir.unwrap_or(DEFAULT_STATE_DIR);
    Ok(watchdog::remove(target.as_ref(), dir).await?)
}
