//! The saved webhooks' actions on the Settings page: one added from its form, and the test
//! button.

use super::{ActionError, Context};
use crate::ssh::Secret;
use crate::webhook::{
    self, saved, Delivery, WebhookKind, WebhookMessage, WebhookTarget, WebhookView,
};

/// Save a webhook of `kind` (as the form names it) under `label`; the URL and secret are checked
/// for that kind and go to the keychain, never to the database.
pub async fn add(
    context: &Context<'_>,
    kind: &str,
    label: &str,
    url: &Secret,
    secret: Option<Secret>,
) -> Result<WebhookView, ActionError> {
    let target = WebhookTarget::new(WebhookKind::parse(kind)?, url.expose(), secret)?;
    Ok(saved::add(context.store, label, &target, context.now()).await?)
}

/// Send the test message to saved webhook `id`: how it went, attempts and answer included.
pub async fn test(context: &Context<'_>, id: i64) -> Result<Delivery, ActionError> {
    let client = webhook::client()?;
    let message = WebhookMessage::test();
    Ok(saved::send_to(&client, context.store, id, &message, context.now()).await?)
}
