//! The team settings the app changes (the Team page's budget, alerts and sharing, an instance's
//! project), each answered with what the screen shows next: the team status, or the project as
//! saved.

use super::{ActionError, Context};
use crate::billing::rules::parse_decimal;
use crate::team::{self, TeamStatus};

/// Set the team's monthly budget in `currency` (`amount` as typed; every member sees it, with
/// reminders at 50/80/100 %); answers the team status with it.
pub async fn set_budget(
    context: &Context<'_>,
    currency: &str,
    amount: &str,
) -> Result<TeamStatus, ActionError> {
    let amount = parse_decimal("amount", amount)?;
    team::set_budget(context.store, currency, amount).await?;
    Ok(team::status(context.store, context.now()).await?)
}

/// Say which project `instance` is rented for (`None` clears it); answers it as saved.
pub async fn set_project(
    context: &Context<'_>,
    instance: &str,
    project: Option<&str>,
) -> Result<Option<String>, ActionError> {
    team::set_project(context.store, instance, project).await?;
    Ok(team::project_of(context.store, instance).await?)
}

/// Name who is told about any member's instance left running, and after how many idle minutes;
/// answers the team status with them.
pub async fn set_alerts(
    context: &Context<'_>,
    recipients: &[String],
    after_minutes: u32,
) -> Result<TeamStatus, ActionError> {
    team::alerts::set(context.store, recipients, after_minutes).await?;
    Ok(team::status(context.store, context.now()).await?)
}

/// Share (or stop sharing) this computer's last Verify results from the next sync; answers the
/// team status.
pub async fn share_verify(context: &Context<'_>, share: bool) -> Result<TeamStatus, ActionError> {
    team::verify::set_sharing(context.store, share, context.now()).await?;
    Ok(team::status(context.store, context.now()).await?)
}
