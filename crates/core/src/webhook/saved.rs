//! The user's webhooks: the kind and a label in SQLite, the URL and the secret in the OS
//! keychain (`webhook-url:<id>`, `webhook-secret:<id>`), through the same keychain functions
//! the SSH passwords use.

use chrono::{DateTime, Utc};
use serde::Serialize;
use ts_rs::TS;

use super::{send, Delivery, Retry, WebhookError, WebhookKind, WebhookMessage, WebhookTarget};
use crate::ssh::{forget_secret, store_secret, stored_secret, Secret};
use crate::store::reminders as repo;
use crate::store::{Store, StoreError};

/// A saved webhook as the settings page lists it: never its URL or secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct WebhookView {
    #[ts(type = "number")]
    pub id: i64,
    pub kind: WebhookKind,
    pub label: String,
    pub has_secret: bool,
    pub created_at: DateTime<Utc>,
}

fn url_account(id: i64) -> String {
    format!("webhook-url:{id}")
}

fn secret_account(id: i64) -> String {
    format!("webhook-secret:{id}")
}

fn keychain(err: &crate::ssh::SshError) -> WebhookError {
    WebhookError::Keychain {
        message: err.to_string(),
    }
}

fn view(row: repo::WebhookRow) -> Result<WebhookView, WebhookError> {
    Ok(WebhookView {
        id: row.id,
        kind: WebhookKind::parse(&row.kind).map_err(|_| {
            WebhookError::Store(StoreError::Corrupt {
                what: "webhook kind",
                value: row.kind.clone(),
            })
        })?,
        label: row.label,
        has_secret: row.has_secret,
        created_at: row.created_at,
    })
}

/// Save a webhook: the row is committed only once the keychain holds its URL (and secret).
#[tracing::instrument(skip(store, target), err, fields(kind = target.kind.as_str()))]
pub async fn add(
    store: &Store,
    label: &str,
    target: &WebhookTarget,
    now: DateTime<Utc>,
) -> Result<WebhookView, WebhookError> {
    let label = label.trim();
    if label.is_empty() || label.chars().count() > 80 {
        return Err(WebhookError::InvalidLabel);
    }
    let mut tx = store.write().await?;
    let id = repo::insert_webhook(
        &mut tx,
        target.kind.as_str(),
        label,
        target.secret.is_some(),
        now,
    )
    .await?;
    store_secret(&url_account(id), &Secret::new(target.url.as_str()))
        .map_err(|err| keychain(&err))?;
    if let Some(secret) = &target.secret {
        if let Err(err) = store_secret(&secret_account(id), secret) {
            let _ = forget_secret(&url_account(id));
            return Err(keychain(&err));
        }
    }
    tx.commit().await.map_err(StoreError::from)?;
    Ok(WebhookView {
        id,
        kind: target.kind,
        label: label.to_owned(),
        has_secret: target.secret.is_some(),
        created_at: now,
    })
}

#[tracing::instrument(skip(store), err)]
pub async fn list(store: &Store) -> Result<Vec<WebhookView>, WebhookError> {
    let mut conn = store.pool().acquire().await?;
    repo::list_webhooks(&mut conn)
        .await?
        .into_iter()
        .map(view)
        .collect()
}

#[tracing::instrument(skip(store), err)]
pub async fn remove(store: &Store, id: i64) -> Result<(), WebhookError> {
    let mut conn = store.pool().acquire().await?;
    if !repo::delete_webhook(&mut conn, id).await? {
        return Err(WebhookError::UnknownWebhook { id });
    }
    // The row is gone; a keychain entry left behind is harmless, so removal still succeeds.
    let _ = forget_secret(&url_account(id));
    let _ = forget_secret(&secret_account(id));
    Ok(())
}

/// The saved webhook's target, read back from the keychain.
fn target_of(hook: &WebhookView) -> Result<WebhookTarget, WebhookError> {
    let url = stored_secret(&url_account(hook.id)).ok_or(WebhookError::MissingUrl)?;
    let secret = if hook.has_secret {
        stored_secret(&secret_account(hook.id))
    } else {
        None
    };
    WebhookTarget::new(hook.kind, url.expose(), secret)
}

/// Send one message to a saved webhook (the settings page's test button).
pub async fn send_to(
    client: &reqwest::Client,
    store: &Store,
    id: i64,
    message: &WebhookMessage,
    now: DateTime<Utc>,
) -> Result<Delivery, WebhookError> {
    let hook = list(store)
        .await?
        .into_iter()
        .find(|h| h.id == id)
        .ok_or(WebhookError::UnknownWebhook { id })?;
    send(client, &target_of(&hook)?, message, now, Retry::default()).await
}

/// Send one message to every saved webhook; each answers for itself.
pub async fn send_to_all(
    client: &reqwest::Client,
    store: &Store,
    message: &WebhookMessage,
    now: DateTime<Utc>,
) -> Result<Vec<(WebhookView, Result<Delivery, WebhookError>)>, WebhookError> {
    let mut results = Vec::new();
    for hook in list(store).await? {
        let outcome = match target_of(&hook) {
            Ok(target) => send(client, &target, message, now, Retry::default()).await,
            Err(err) => Err(err),
        };
        results.push((hook, outcome));
    }
    Ok(results)
}
