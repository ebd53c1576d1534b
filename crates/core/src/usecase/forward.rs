//! Port forwards from this computer to a port on an instance, over its live connection.

use super::{ActionError, Context};
use crate::connect::{self, ForwardRequest};
use crate::ssh::ForwardInfo;

/// Open a forward to `instance` (dialling its saved target when it is not connected).
pub async fn open(
    context: &Context<'_>,
    instance: &str,
    request: &ForwardRequest,
) -> Result<ForwardInfo, ActionError> {
    let target = context.live_target(instance).await?;
    Ok(connect::open_forward(&target, request).await?)
}

/// Close forward `id` of `instance`.
pub async fn close(context: &Context<'_>, instance: &str, id: u64) -> Result<(), ActionError> {
    let target = context.live_target(instance).await?;
    Ok(target.close_forward(id)?)
}
