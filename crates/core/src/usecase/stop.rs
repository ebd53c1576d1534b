//! "Stop now" and the provider's power verbs, from the instance page, a reminder or the tray.

use super::ActionError;
use crate::account::{Backoff, PowerVerb};
use crate::stop::{
    self, ApiEndpoints, HandCheck, HandStop, PowerReport, SshStop, StopBy, StopReport, StopVia,
    StopWait,
};
use crate::update::Activity;

use super::Context;

/// Power `instance` off now, over SSH with `command` on its live connection or through its
/// provider's API, and record `stopped` once confirmed; the live connection is closed after.
pub async fn stop_now(
    context: &Context<'_>,
    instance: &str,
    via: StopVia,
    command: Option<&str>,
    provider_id: Option<&str>,
) -> Result<StopReport, ActionError> {
    // An update waits until the stop is confirmed or refused (`update::gate`).
    let _running = context.running_work.begin(Activity::Stop);
    let target = match via {
        StopVia::Ssh => Some(context.live_target(instance).await?),
        StopVia::Api => None,
    };
    let by = match &target {
        Some(target) => StopBy::Ssh(SshStop {
            link: Some(target.as_ref()),
            command,
            ..SshStop::default()
        }),
        None => StopBy::Api {
            provider_id,
            key: None,
        },
    };
    // The window has no "cancel" for a stop: it runs until confirmed or refused.
    let report = stop::now(
        context.store,
        instance,
        by,
        &ApiEndpoints::from_env(),
        StopWait::default(),
        context.clock,
        std::future::pending(),
    )
    .await?;
    context.live.disconnect(instance).await;
    Ok(report)
}

/// Power on, off or release through the provider's API, recorded once the provider confirms;
/// a connection to an instance no longer running is closed.
pub async fn power(
    context: &Context<'_>,
    instance: &str,
    verb: PowerVerb,
) -> Result<PowerReport, ActionError> {
    let report = stop::power(
        context.store,
        instance,
        verb,
        &context.endpoints()?,
        Backoff::default(),
        StopWait::default(),
        context.clock,
    )
    .await?;
    if verb != PowerVerb::On {
        context.live.disconnect(instance).await;
    }
    Ok(report)
}

/// "Already stopped at the provider — record it": the live connection closed, `stopped`
/// recorded on the user's word, then a look whether it still answers.
pub async fn record_by_hand(
    context: &Context<'_>,
    instance: &str,
) -> Result<HandStop, ActionError> {
    context.live.disconnect(instance).await;
    Ok(stop::record_by_hand_and_look(
        context.store,
        instance,
        &ApiEndpoints::from_env(),
        context.clock,
    )
    .await?)
}

/// Look again whether a stop recorded by hand holds.
pub async fn check_again(
    context: &Context<'_>,
    instance: &str,
) -> Result<Option<HandCheck>, ActionError> {
    Ok(stop::check_again(
        context.store,
        instance,
        &ApiEndpoints::from_env(),
        context.clock,
    )
    .await?)
}
