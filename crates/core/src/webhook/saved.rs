//! The user's webhooks: the kind and a label in SQLite, the URL and the secret in the OS
//! keychain (`webhook-url:<database>:<id>`, `webhook-secret:<database>:<id>`), through the same
//! keychain functions the SSH passwords use. The database's own id is in the name because row
//! ids repeat across files: a second `--db` would otherwise overwrite the first one's secrets.

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

/// The keychain names of one saved webhook.
struct Accounts {
    url: String,
    secret: String,
    /// The names before they carried the database's id (read once, then moved).
    legacy_url: String,
    legacy_secret: String,
}

async fn accounts(store: &Store, id: i64) -> Result<Accounts, WebhookError> {
    let mut conn = store.pool().acquire().await?;
    let database = crate::store::identity::database_id(&mut conn).await?;
    Ok(Accounts {
        url: format!("webhook-url:{database}:{id}"),
        secret: format!("webhook-secret:{database}:{id}"),
        legacy_url: format!("webhook-url:{id}"),
        legacy_secret: format!("webhook-secret:{id}"),
    })
}

/// The secret under `name`, else under `legacy`, moved to `name` on the way.
fn read_moving(name: &str, legacy: &str) -> Option<Secret> {
    if let Some(secret) = stored_secret(name) {
        return Some(secret);
    }
    let secret = stored_secret(legacy)?;
    if store_secret(name, &secret).is_ok() {
        let _ = forget_secret(legacy);
    }
    Some(secret)
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
    let database = crate::store::identity::database_id(&mut tx).await?;
    let id = repo::insert_webhook(
        &mut tx,
        target.kind.as_str(),
        label,
        target.secret.is_some(),
        now,
    )
    .await?;
    let url_account = format!("webhook-url:{database}:{id}");
    store_secret(&url_account, &Secret::new(target.url.as_str())).map_err(|err| keychain(&err))?;
    if let Some(secret) = &target.secret {
        if let Err(err) = store_secret(&format!("webhook-secret:{database}:{id}"), secret) {
            let _ = forget_secret(&url_account);
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
    let names = accounts(store, id).await?;
    let mut conn = store.pool().acquire().await?;
    if !repo::delete_webhook(&mut conn, id).await? {
        return Err(WebhookError::UnknownWebhook { id });
    }
    // The row is gone; a keychain entry left behind is harmless, so removal still succeeds.
    // The legacy names are left alone: another database may be using them.
    let _ = forget_secret(&names.url);
    let _ = forget_secret(&names.secret);
    Ok(())
}

/// The saved webhook's target, read back from the keychain.
async fn target_of(store: &Store, hook: &WebhookView) -> Result<WebhookTarget, WebhookError> {
    let names = accounts(store, hook.id).await?;
    let url = read_moving(&names.url, &names.legacy_url).ok_or(WebhookError::MissingUrl)?;
    let secret = if hook.has_secret {
        read_moving(&names.secret, &names.legacy_secret)
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
    send(
        client,
        &target_of(store, &hook).await?,
        message,
        now,
        Retry::default(),
    )
    .await
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
        let outcome = match target_of(store, &hook).await {
            Ok(target) => send(client, &target, message, now, Retry::default()).await,
            Err(err) => Err(err),
        };
        results.push((hook, outcome));
    }
    Ok(results)
}
